import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { DEV_MNEMONIC } from './mnemonic'; // not ./accounts: starting anvil needs no key derivation
import { guardChild } from './process-guard';

export const DEFAULT_CHAIN_ID = 31337;

export interface StartAnvilOptions {
  /** TCP port on 127.0.0.1; 0 or absent: a free port chosen by the OS. */
  port?: number;
  /** Default 31337. */
  chainId?: number;
  /** Seconds between blocks; absent: automine (a block per transaction). */
  blockTime?: number;
  /** Default true: anvil's banner and request log are drained, not printed. */
  quiet?: boolean;
  /** How long to wait for the RPC to answer. Default 10 000 ms. */
  timeoutMs?: number;
}

export interface AnvilInstance {
  rpcUrl: string;
  chainId: number;
  port: number;
  pid: number;
  /** Kills anvil and resolves once the process is gone. Safe to call twice. */
  stop(): Promise<void>;
}

const NODE_ARCH_TO_FOUNDRY: Partial<Record<string, string>> = { x64: 'amd64', arm64: 'arm64' };
const SUPPORTED_PLATFORMS = new Set(['linux', 'darwin', 'win32']);

/** The npm package holding anvil for a platform, e.g. `@foundry-rs/anvil-linux-amd64`. */
export function anvilPackageName(platform: string = process.platform, arch: string = process.arch): string {
  const foundryArch = NODE_ARCH_TO_FOUNDRY[arch];
  if (!SUPPORTED_PLATFORMS.has(platform) || !foundryArch) {
    throw new Error(
      `devchain: anvil has no npm build for ${platform}/${arch} (supported: linux, darwin, win32 on x64/arm64)`,
    );
  }
  return `@foundry-rs/anvil-${platform}-${foundryArch}`;
}

/** Absolute path of the anvil binary shipped by the platform package (never npx: it orphans anvil). */
export function anvilBinaryPath(): string {
  const pkg = anvilPackageName();
  const file = `${pkg}/bin/${process.platform === 'win32' ? 'anvil.exe' : 'anvil'}`;
  try {
    return require.resolve(file);
  } catch {
    throw new Error(
      `devchain: cannot find ${file}. It is an optional dependency of @foundry-rs/anvil; ` +
        'run `npm install` on this machine (npm skips optional packages of other platforms).',
    );
  }
}

/** Starts a fresh in-memory anvil with the default dev mnemonic and waits until its RPC answers. */
export async function startAnvil(opts: StartAnvilOptions = {}): Promise<AnvilInstance> {
  const port = opts.port ?? 0;
  const chainId = opts.chainId ?? DEFAULT_CHAIN_ID;
  const quiet = opts.quiet ?? true;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`devchain: invalid port ${port}`);
  if (!Number.isSafeInteger(chainId) || chainId <= 0) throw new Error(`devchain: invalid chainId ${chainId}`);
  if (opts.blockTime !== undefined && !(opts.blockTime > 0))
    throw new Error(`devchain: invalid blockTime ${opts.blockTime}`);

  // Port 0 goes to anvil itself, which binds it and prints the port it got: no window in which
  // another process could take a port we probed and released.
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--chain-id',
    String(chainId),
    '--mnemonic',
    DEV_MNEMONIC,
    '--accounts',
    '10',
  ];
  if (opts.blockTime !== undefined) args.push('--block-time', String(opts.blockTime));

  const child = spawn(anvilBinaryPath(), args, { stdio: ['ignore', 'pipe', 'pipe'], detached: false });
  guardChild(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const output = captureOutput(child, quiet);

  try {
    const deadline = Date.now() + timeoutMs;
    const boundPort = await waitForListening(child, output, deadline);
    const rpcUrl = `http://127.0.0.1:${boundPort}`;
    await waitForChainId(rpcUrl, chainId, deadline);
    // An unstopped anvil must not keep the process alive; the exit hooks kill it.
    unrefChild(child);
    return { rpcUrl, chainId, port: boundPort, pid: child.pid as number, stop: once(() => stopChild(child, exited)) };
  } catch (err) {
    await stopChild(child, exited);
    throw err;
  }
}

interface CapturedOutput {
  /** The last few KB of stdout+stderr, for error messages. */
  tail(): string;
  onText(listener: (text: string) => void): void;
}

// anvil logs every request to stdout; the pipes are always drained or anvil would block on a full pipe.
function captureOutput(child: ChildProcess, quiet: boolean): CapturedOutput {
  let tail = '';
  const listeners: Array<(text: string) => void> = [];
  const collect = (stream: Readable | null, sink: NodeJS.WriteStream): void => {
    stream?.setEncoding('utf8');
    stream?.on('data', (text: string) => {
      tail = (tail + text).slice(-4096);
      for (const l of listeners) l(text);
      if (!quiet) sink.write(text);
    });
  };
  collect(child.stdout, process.stdout);
  collect(child.stderr, process.stderr);
  return { tail: () => tail, onText: (l) => listeners.push(l) };
}

function waitForListening(child: ChildProcess, output: CapturedOutput, deadline: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let seen = '';
    let settled = false;
    const timer = setTimeout(
      () => fail(new Error(`devchain: anvil did not report a listening port in time. Output:\n${output.tail()}`)),
      Math.max(0, deadline - Date.now()),
    );
    const onExit = (code: number | null, signal: string | null): void =>
      fail(new Error(`devchain: anvil exited early (code ${code}, signal ${signal}). Output:\n${output.tail()}`));
    const onError = (err: Error): void => fail(new Error(`devchain: cannot start anvil: ${err.message}`));
    function fail(err: Error): void {
      settled = true;
      clearTimeout(timer);
      child.off('exit', onExit).off('error', onError);
      reject(err);
    }
    child.once('exit', onExit).once('error', onError);
    output.onText((text) => {
      if (settled) return;
      seen = (seen + text).slice(-512);
      const match = /Listening on [^\s:]+:(\d+)/.exec(seen);
      if (!match) return;
      settled = true;
      clearTimeout(timer);
      child.off('exit', onExit).off('error', onError);
      resolve(Number(match[1]));
    });
  });
}

async function waitForChainId(rpcUrl: string, chainId: number, deadline: number): Promise<void> {
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      });
      const body = (await res.json()) as { result?: string };
      if (body.result !== undefined && Number(body.result) === chainId) return;
      lastError = new Error(`eth_chainId answered ${JSON.stringify(body)}`);
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`devchain: anvil at ${rpcUrl} did not answer eth_chainId in time: ${String(lastError)}`);
}

function unrefChild(child: ChildProcess): void {
  child.unref();
  for (const s of [child.stdout, child.stderr]) (s as unknown as { unref?: () => void } | null)?.unref?.();
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.ref(); // keep the loop alive until the exit is observed, so `await stop()` resolves
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
  await exited;
  clearTimeout(timer);
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let result: Promise<void> | undefined;
  return () => (result ??= fn());
}
