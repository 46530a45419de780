import { readdirSync, readFileSync } from 'node:fs';

export interface CpuTimes {
  /** Seconds on a CPU, all threads (GC and libuv's included). */
  running: number;
  /** Seconds runnable but waiting for a CPU that other work held. */
  waiting: number;
}

/**
 * A process's CPU times so far, from Linux's /proc (NaN elsewhere). Over a round they tell a
 * pinned server's limits apart: running most of the round, the server set the pace; waiting,
 * other work on the machine did; neither (idle), the load generator did.
 */
export function cpuTimes(pid: number): CpuTimes {
  const times = { running: 0, waiting: 0 };
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      // schedstat: nanoseconds running, nanoseconds waiting on the run queue, time slices.
      const [running, waiting] = readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ').map(Number);
      times.running += running / 1e9;
      times.waiting += waiting / 1e9;
    }
    return times;
  } catch {
    return { running: NaN, waiting: NaN };
  }
}
