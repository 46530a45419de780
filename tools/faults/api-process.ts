import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
// Not in devchain's public API: the guard that kills children however this process ends.
import { guardChild } from '../../libs/devchain/src/process-guard';

export interface ApiProcess {
  url: string;
  /** Starts the API (again) and resolves once /v1/health answers 200. */
  start(): Promise<void>;
  /** SIGKILL, as a crash or an OOM kill would: no shutdown hook runs. Resolves once it is gone. */
  kill(): Promise<void>;
  /** SIGTERM, a clean shutdown (closes the database); SIGKILL after 10 s. */
  stop(): Promise<void>;
}

export interface ApiProcessOptions {
  /** The built entry point, e.g. dist/apps/api/main.js. */
  main: string;
  cwd: string;
  port: number;
  env: Record<string, string>;
  /** Every run's stdout and stderr are appended here. */
  logFile: string;
  startTimeoutMs?: number;
}

/** The API as a child process that can be killed and started again on the same port and data. */
export function apiProcess(options: ApiProcessOptions): ApiProcess {
  const url = `http://127.0.0.1:${options.port}`;
  const log: WriteStream = createWriteStream(options.logFile, { flags: 'a' });
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const end = async (signal: NodeJS.Signals) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const timer = signal === 'SIGKILL' ? undefined : setTimeout(() => child?.kill('SIGKILL'), 10_000);
    child.kill(signal);
    await exited;
    clearTimeout(timer);
  };

  return {
    url,
    async start() {
      await end('SIGKILL');
      log.write(`\n--- start ${new Date().toISOString()}\n`);
      const started = spawn(process.execPath, ['--enable-source-maps', options.main], {
        cwd: options.cwd,
        env: { ...process.env, ...options.env, PORT: String(options.port), HOST: '127.0.0.1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      guardChild(started);
      started.stdout!.pipe(log, { end: false });
      started.stderr!.pipe(log, { end: false });
      child = started;
      exited = new Promise((resolve) => started.once('exit', () => resolve()));
      await waitForHealth(url, started, options.startTimeoutMs ?? 30_000);
    },
    kill: () => end('SIGKILL'),
    async stop() {
      await end('SIGTERM');
      if (!log.writableEnded) await new Promise((resolve) => log.end(resolve));
    },
  };
}

async function waitForHealth(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the API exited during start-up (code ${child.exitCode}, signal ${child.signalCode})`);
    if (
      await fetch(`${url}/v1/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the API was not healthy within ${timeoutMs} ms`);
}
