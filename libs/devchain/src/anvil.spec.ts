import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { anvilBinaryPath, anvilPackageName, startAnvil, type AnvilInstance } from './anvil';
import { devPublicClient } from './clients';
import { isProcessGone, waitUntil } from './test-support';

const started: AnvilInstance[] = [];
async function start(...args: Parameters<typeof startAnvil>): Promise<AnvilInstance> {
  const instance = await startAnvil(...args);
  started.push(instance);
  return instance;
}
afterAll(async () => {
  await Promise.all(started.map((a) => a.stop()));
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('anvil binary', () => {
  it('maps node platform/arch to the foundry package names', () => {
    expect(anvilPackageName('linux', 'x64')).toBe('@foundry-rs/anvil-linux-amd64');
    expect(anvilPackageName('darwin', 'arm64')).toBe('@foundry-rs/anvil-darwin-arm64');
    expect(anvilPackageName('win32', 'x64')).toBe('@foundry-rs/anvil-win32-amd64');
  });

  it('explains an unsupported platform', () => {
    expect(() => anvilPackageName('freebsd', 'x64')).toThrow(/no npm build for freebsd\/x64/);
    expect(() => anvilPackageName('linux', 'ia32')).toThrow(/no npm build for linux\/ia32/);
  });

  it('resolves the installed binary', () => {
    expect(anvilBinaryPath()).toMatch(/@foundry-rs[\\/]anvil-[a-z0-9]+-[a-z0-9]+[\\/]bin[\\/]anvil/);
  });
});

describe('startAnvil', () => {
  it('starts on a free port with chain id 31337', async () => {
    const anvil = await start();
    expect(anvil.chainId).toBe(31337);
    expect(anvil.port).toBeGreaterThan(0);
    expect(anvil.rpcUrl).toBe(`http://127.0.0.1:${anvil.port}`);
    expect(await devPublicClient(anvil.rpcUrl).getChainId()).toBe(31337);
    // The default mnemonic's first account is funded.
    const balance = await devPublicClient(anvil.rpcUrl).getBalance({
      address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
    });
    expect(balance).toBe(10_000n * 10n ** 18n);
  });

  it('honours an explicit port and chain id; two chains run side by side', async () => {
    const port = await freePort();
    const [a, b] = await Promise.all([start({ port, chainId: 84532 }), start({ chainId: 8453 })]);
    expect(a.port).toBe(port);
    expect(await devPublicClient(a.rpcUrl).getChainId()).toBe(84532);
    expect(await devPublicClient(b.rpcUrl).getChainId()).toBe(8453);
    expect(b.port).not.toBe(a.port);
  });

  it('fails clearly when the port is taken', async () => {
    const taken = await start();
    await expect(startAnvil({ port: taken.port })).rejects.toThrow(/anvil exited early/);
  });

  it('rejects invalid options', async () => {
    await expect(startAnvil({ port: -1 })).rejects.toThrow(/invalid port/);
    await expect(startAnvil({ chainId: 0 })).rejects.toThrow(/invalid chainId/);
    await expect(startAnvil({ blockTime: 0 })).rejects.toThrow(/invalid blockTime/);
  });

  it('mines on an interval with blockTime', async () => {
    const anvil = await start({ blockTime: 1 });
    const client = devPublicClient(anvil.rpcUrl);
    expect(await waitUntilAsync(async () => (await client.getBlockNumber()) >= 1n, 2_500)).toBe(true);
  });

  it('stop() ends the process and can be called twice', async () => {
    const anvil = await startAnvil();
    expect(isProcessGone(anvil.pid)).toBe(false);
    await anvil.stop();
    expect(() => process.kill(anvil.pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    await anvil.stop();
    await expect(fetch(anvil.rpcUrl, { method: 'POST' })).rejects.toThrow(); // nothing listens any more
  });
});

describe('no orphans when the parent process ends', () => {
  // A child node process starts anvil, prints its pid, then ends in the given way.
  const script = (mode: string): string => `
    const { startAnvil } = require(${JSON.stringify(join(__dirname, 'anvil.ts'))});
    startAnvil().then((a) => {
      process.stdout.write(a.pid + '\\n');
      if (${JSON.stringify(mode)} === 'exit') process.exit(0);
      if (${JSON.stringify(mode)} === 'return') return; // nothing keeps the loop alive
      setInterval(() => {}, 1000);
    });`;

  // One child per way of ending, run side by side (each pays ~0.6 s of node + swc start-up).
  it.each([['return', 'exit', 'SIGTERM', 'SIGKILL']])('after %s, %s, %s or %s', async (...modes) => {
    await Promise.all(modes.map((mode) => expectNoOrphan(mode)));
  });

  async function expectNoOrphan(mode: string): Promise<void> {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', '-e', script(mode)], {
      cwd: join(__dirname, '../../..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const pid = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (d: string) => {
        out += d;
        if (out.includes('\n')) resolve(Number(out.trim()));
      });
      child.once('exit', (code) => reject(new Error(`child exited (${code}) before starting anvil`)));
    });
    expect(pid).toBeGreaterThan(0);
    if (mode === 'SIGTERM' || mode === 'SIGKILL') child.kill(mode);
    await exited;
    if (!(await waitUntil(() => isProcessGone(pid), 3_000)))
      throw new Error(`anvil ${pid} outlived its parent (${mode})`);
  }
});

async function waitUntilAsync(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
