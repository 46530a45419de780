import type { AppConfig } from '../config/config';
import { BackgroundJobs } from './background-jobs';

/** A job that runs until `finish` is called, counting its starts. */
function heldJob() {
  let finish = () => {};
  const job = {
    starts: 0,
    finish: () => finish(),
    run: () => {
      job.starts += 1;
      return new Promise<void>((resolve) => (finish = resolve));
    },
  };
  return job;
}

function jobsWith(
  reconcile: () => Promise<unknown>,
  intervalMs = 10,
  sweeps: { endHoldsOver?: () => Promise<unknown>; followOnTheirWay?: () => Promise<unknown> } = {},
) {
  const config = { chain: { reconcileIntervalMs: intervalMs, batchSettlement: { claimIntervalMs: 0 } } } as AppConfig;
  const idle = {
    runOnce: async () => undefined,
    endHoldsOver: async () => undefined,
    followOnTheirWay: async () => undefined,
  };
  const never = { deleteOver: async () => undefined, deleteExpired: async () => undefined };
  return new BackgroundJobs(
    config,
    { runOnce: reconcile } as never,
    idle as never,
    { ...idle, ...sweeps } as never,
    { ...idle, ...sweeps } as never,
    idle as never,
    never as never,
    never as never,
    never as never,
  );
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('BackgroundJobs', () => {
  it('shuts down only once the run in flight has finished: it would hold its job lock after the app closed', async () => {
    const reconciler = heldJob();
    const jobs = jobsWith(reconciler.run);
    jobs.onApplicationBootstrap();
    await wait(30);
    expect(reconciler.starts).toBe(1);
    let closed = false;
    const shutdown = Promise.resolve(jobs.onApplicationShutdown()).then(() => (closed = true));
    await wait(30);
    expect(closed).toBe(false);
    reconciler.finish();
    await shutdown;
    expect(closed).toBe(true);
    // No run starts after shutdown began.
    await wait(30);
    expect(reconciler.starts).toBe(1);
  });

  it('follows relayer deposits while the refund holds sweep fails or hangs: a stuck deposit holds every later nonce', async () => {
    for (const endHoldsOver of [() => Promise.reject(new Error('database down')), () => new Promise(() => {})]) {
      let followed = 0;
      const jobs = jobsWith(async () => undefined, 10, {
        endHoldsOver,
        followOnTheirWay: async () => void (followed += 1),
      });
      jobs.onApplicationBootstrap();
      // Runs every 10 ms: a second one within 2 s, however late a loaded machine fires timers (one CI
      // run saw a single run in 50 ms); a sweep that held them up would never let it come.
      for (const until = Date.now() + 2_000; followed <= 1 && Date.now() < until;) await wait(10);
      expect(followed).toBeGreaterThan(1);
      for (const timer of (jobs as unknown as { timers: NodeJS.Timeout[] }).timers) clearTimeout(timer);
    }
  });

  it('shuts down at once when nothing runs, and a failed run does not fail the shutdown', async () => {
    let runs = 0;
    const jobs = jobsWith(async () => {
      runs += 1;
      throw new Error('node down');
    });
    jobs.onApplicationBootstrap();
    await wait(30);
    expect(runs).toBeGreaterThan(0);
    await expect(Promise.resolve(jobs.onApplicationShutdown())).resolves.toBeUndefined();
  });
});
