import { spawn, type ChildProcess } from 'node:child_process';

// Makes sure a spawned child never outlives this process, however it ends:
// - normal exit, process.exit(), uncaught exception: the 'exit' hook kills the children;
// - SIGINT/SIGTERM/SIGHUP: a handler kills them, then re-raises the signal when nobody else
//   listens for it, so the default "terminate" behaviour is kept;
// - SIGKILL or a crash (no JS runs): a tiny `sh` watchdog per child blocks reading a pipe from us;
//   the kernel closes the pipe when we die, `read` returns and the watchdog kills the child.
//   (Linux has PR_SET_PDEATHSIG for this, but Node does not expose it.)

const guarded = new Map<ChildProcess, ChildProcess | undefined>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
let hooksInstalled = false;

/** Registers `child` to be killed when this process ends; forgets it once it exits. */
export function guardChild(child: ChildProcess): void {
  installHooks();
  const watchdog = startWatchdog(child);
  guarded.set(child, watchdog);
  child.once('exit', () => {
    guarded.delete(child);
    // The watchdog holds the pid: kill it now so a later parent death cannot hit a reused pid.
    watchdog?.kill('SIGKILL');
  });
}

function killAll(): void {
  for (const [child, watchdog] of guarded) {
    child.kill('SIGKILL');
    watchdog?.kill('SIGKILL');
  }
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', killAll);
  for (const signal of SIGNALS) {
    const onSignal = (): void => {
      killAll();
      if (process.listenerCount(signal) === 1) {
        process.off(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

function startWatchdog(child: ChildProcess): ChildProcess | undefined {
  if (process.platform === 'win32' || child.pid === undefined) return undefined;
  const watchdog = spawn(
    '/bin/sh',
    ['-c', 'read _ ; kill -9 "$1" 2>/dev/null', 'devchain-watchdog', String(child.pid)],
    {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: false,
    },
  );
  watchdog.on('error', () => undefined); // no /bin/sh: the JS hooks still cover ordinary exits
  watchdog.stdin?.on('error', () => undefined); // EPIPE once the watchdog is gone
  // Neither the watchdog nor its pipe may keep the event loop alive.
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return watchdog;
}
