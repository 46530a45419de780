import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { onCpu } from './pinning';

export interface Child {
  pid: number;
  /** The child's next line on stdout; throws if it exits first. */
  readLine(): Promise<string>;
  writeLine(line: string): void;
  /** Ends its stdin (the child's cue to shut down cleanly, writing a --cpu-prof profile) and waits for it to exit. */
  close(): Promise<void>;
}

const REPO = join(__dirname, '..', '..');
const CLOSE_TIMEOUT_MS = 10_000;

/**
 * A TypeScript file of this folder run as its own Node process, as `npm run bench` runs run.ts, or
 * a built JavaScript file, pinned to `cpu` when given and possible. It talks in lines: stdin in, stdout out; stderr is ours.
 */
export function startChild(
  file: string,
  {
    cpu,
    args = [],
    nodeArgs = [],
    env = {},
  }: { cpu?: number; args?: string[]; nodeArgs?: string[]; env?: Record<string, string> },
): Child {
  // A built .js file (an absolute path) runs as it is; a .ts file of this folder through swc.
  const script = file.endsWith('.js') ? [file] : ['-r', require.resolve('@swc-node/register'), join(__dirname, file)];
  const node = [process.execPath, ...nodeArgs, ...script, ...args];
  const [command, ...argv] = cpu === undefined ? node : onCpu(cpu, node);
  const child = spawn(command, argv, {
    cwd: REPO,
    env: { ...process.env, SWC_NODE_PROJECT: process.env.SWC_NODE_PROJECT ?? 'tsconfig.base.json', ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    pid: child.pid!,
    async readLine() {
      const next = await lines.next();
      if (next.done) throw new Error(`${file} ${args.join(' ')} exited (code ${child.exitCode}) before answering`);
      return next.value;
    },
    writeLine: (line) => void child.stdin.write(line + '\n'),
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** In a child: run `shutdown` and exit once the parent ends our stdin (or dies). */
export function onParentGone(shutdown: () => Promise<void>): void {
  process.stdin.on('end', () => void shutdown().finally(() => process.exit(0)));
  process.stdin.resume();
}
