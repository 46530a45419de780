import { runtimeKeyDirectoryFetch } from './runtime-fetch';

/** Runs `work` with `name` defined on globalThis as `value`, then puts back what was there. */
async function withGlobal(name: string, value: unknown, work: () => Promise<void>): Promise<void> {
  const before = Object.getOwnPropertyDescriptor(globalThis, name);
  Object.defineProperty(globalThis, name, { value, configurable: true });
  try {
    await work();
  } finally {
    if (before) Object.defineProperty(globalThis, name, before);
    else delete (globalThis as Record<string, unknown>)[name];
  }
}

describe('runtimeKeyDirectoryFetch', () => {
  const fetched = jest.fn(async () => new Response('{}'));
  beforeEach(() => {
    fetched.mockClear();
    jest.spyOn(globalThis, 'fetch').mockImplementation(fetched);
  });
  afterEach(() => jest.restoreAllMocks());

  it('fetches nothing on Node, and says once how to verify', async () => {
    const warnings: string[] = [];
    const directoryFetch = runtimeKeyDirectoryFetch((message) => warnings.push(message));
    await expect(directoryFetch('https://agent.example/.well-known/x')).rejects.toThrow(/webBotAuth.fetch/);
    await expect(directoryFetch('https://agent.example/.well-known/x')).rejects.toThrow();
    expect(fetched).not.toHaveBeenCalled();
    expect(warnings).toEqual([expect.stringContaining('nodeKeyDirectoryFetch()')]);
  });

  it('uses the runtime’s fetch on Cloudflare Workers', () =>
    withGlobal('navigator', { userAgent: 'Cloudflare-Workers' }, async () => {
      await runtimeKeyDirectoryFetch(() => undefined)('https://agent.example/');
      expect(fetched).toHaveBeenCalledTimes(1);
    }));

  it('uses the runtime’s fetch on Deno Deploy, not on a Deno server nor where Deno may not read its environment', async () => {
    const deno = (env: Record<string, string>, readable = true) => ({
      env: {
        get: (name: string) => {
          if (!readable) throw new Error('PermissionDenied');
          return env[name];
        },
      },
    });
    await withGlobal('Deno', deno({ DENO_DEPLOYMENT_ID: 'abc' }), async () => {
      await runtimeKeyDirectoryFetch(() => undefined)('https://agent.example/');
    });
    expect(fetched).toHaveBeenCalledTimes(1);
    for (const runtime of [deno({}), deno({ DENO_DEPLOYMENT_ID: 'abc' }, false)])
      await withGlobal('Deno', runtime, async () => {
        await expect(runtimeKeyDirectoryFetch(() => undefined)('https://agent.example/')).rejects.toThrow();
      });
    expect(fetched).toHaveBeenCalledTimes(1);
  });
});
