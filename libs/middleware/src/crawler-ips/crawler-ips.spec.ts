import { BOT_CATALOGUE_ENTRIES } from '@crawlgate/core';
import { catalogueIpSources, createCrawlerIps, type CrawlerIpsOptions } from './crawler-ips';

const GOOGLE = 'https://ranges.test/googlebot.json';
const LIST = JSON.stringify({ prefixes: [{ ipv4Prefix: '66.249.64.0/27' }, { ipv6Prefix: '2001:4860:4801:10::/64' }] });

/** A fetch answering from `answers` (one per call, the last repeated), counting its calls; `hold` keeps answers back. */
function listServer(...answers: Array<() => Response | Promise<Response>>) {
  const calls: string[] = [];
  let release: () => void = () => undefined;
  let held: Promise<void> | undefined;
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    calls.push(String(input));
    if (held) await held;
    init?.signal?.throwIfAborted();
    return answers[Math.min(calls.length - 1, answers.length - 1)]();
  }) as typeof globalThis.fetch;
  return {
    fetch,
    calls,
    hold() {
      held = new Promise((resolve) => (release = resolve));
    },
    release: () => {
      held = undefined;
      release();
    },
  };
}

/** Runs `run`, then waits a moment and fails if any promise was rejected with nobody handling it meanwhile. */
async function expectNoUnhandledRejection(run: () => Promise<void>) {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    await run();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
}

const ok = () => new Response(LIST, { status: 200, headers: { 'content-type': 'application/json' } });

function ipsWith(server: ReturnType<typeof listServer>, options: CrawlerIpsOptions = {}) {
  let clock = 1_000_000;
  const warnings: string[] = [];
  const ips = createCrawlerIps(
    new Map([['Googlebot', GOOGLE]]),
    { fetch: server.fetch, now: () => clock, ...options },
    (m) => warnings.push(m),
  );
  return { ips, warnings, advance: (ms: number) => (clock += ms) };
}

describe('createCrawlerIps', () => {
  it('says nothing of a crawler that publishes no ranges, and fetches nothing for it', () => {
    const server = listServer(ok);
    const { ips } = ipsWith(server);
    expect(ips.check('AhrefsBot', '66.249.64.1')).toBeUndefined();
    expect(server.calls).toEqual([]);
  });

  it('fetches a list once for requests that come together, then answers from it', async () => {
    const server = listServer(ok);
    const { ips } = ipsWith(server);
    server.hold();
    expect(ips.check('Googlebot', '66.249.64.1')).toBe('loading');
    expect(ips.check('Googlebot', '8.8.8.8')).toBe('loading');
    const loaded = ips.loaded('Googlebot');
    server.release();
    await loaded;
    expect(server.calls).toEqual([GOOGLE]);
    expect(ips.check('Googlebot', '66.249.64.1')).toBe('in');
    expect(ips.check('Googlebot', '::ffff:66.249.64.31')).toBe('in');
    expect(ips.check('Googlebot', '2001:4860:4801:10::9')).toBe('in');
    expect(ips.check('Googlebot', '66.249.64.32')).toBe('out');
    expect(ips.check('Googlebot', undefined)).toBe('out');
    expect(server.calls).toHaveLength(1);
  });

  it.each([
    ['an error status', () => new Response(LIST, { status: 404 }), /answered 404/],
    ['a body that is not a list', () => new Response('<html>', { status: 200 }), /not JSON/],
    [
      'a body larger than maxBytes',
      () => new Response(LIST + ' '.repeat(2000), { status: 200 }),
      /larger than 1000 bytes/,
    ],
    ['a network error', () => Promise.reject(new TypeError('fetch failed')), /fetch failed/],
  ])(
    'fails closed on %s: nothing verifies, a warning says why, no new fetch before retryMs',
    async (_, answer, reason) => {
      const server = listServer(answer, ok);
      const { ips, warnings, advance } = ipsWith(server, { maxBytes: 1000 });
      expect(ips.check('Googlebot', '66.249.64.1')).toBe('loading');
      await ips.loaded('Googlebot');
      expect(ips.check('Googlebot', '66.249.64.1')).toBe('out');
      expect(warnings).toEqual([expect.stringMatching(reason)]);
      advance(59_000);
      expect(ips.check('Googlebot', '66.249.64.1')).toBe('out');
      expect(server.calls).toHaveLength(1);
      advance(1_000);
      expect(ips.check('Googlebot', '66.249.64.1')).toBe('loading');
      await ips.loaded('Googlebot');
      expect(ips.check('Googlebot', '66.249.64.1')).toBe('in');
    },
  );

  it('gives up on a list that does not arrive within timeoutMs', async () => {
    const fetch = ((_: unknown, init?: RequestInit) =>
      new Promise<Response>((_, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)),
      )) as typeof globalThis.fetch;
    const { ips, warnings } = ipsWith(listServer(ok), { fetch, timeoutMs: 50 });
    expect(ips.check('Googlebot', '66.249.64.1')).toBe('loading');
    await ips.loaded('Googlebot');
    expect(ips.check('Googlebot', '66.249.64.1')).toBe('out');
    expect(warnings[0]).toMatch(/could not be loaded/);
  });

  it('gives up after timeoutMs even on a fetch that ignores its abort signal', async () => {
    const fetch = (() => new Promise<Response>(() => undefined)) as typeof globalThis.fetch;
    const { ips, warnings } = ipsWith(listServer(ok), { fetch, timeoutMs: 50 });
    expect(ips.check('Googlebot', '66.249.64.1')).toBe('loading');
    await ips.loaded('Googlebot');
    expect(ips.check('Googlebot', '66.249.64.1')).toBe('out');
    expect(warnings[0]).toMatch(/no answer within 50 ms/);
  });

  it('survives a fetch that rejects with no Error and a logger that throws: no unhandled rejection, nothing verified', async () => {
    await expectNoUnhandledRejection(async () => {
      for (const [fetch, warn] of [
        [() => Promise.reject(undefined), () => undefined],
        [
          () => Promise.reject(new Error('down')),
          () => {
            throw new Error('logger down');
          },
        ],
      ] as const) {
        const ips = createCrawlerIps(
          new Map([['Googlebot', GOOGLE]]),
          { fetch: fetch as unknown as typeof globalThis.fetch },
          warn,
        );
        expect(ips.check('Googlebot', '66.249.64.1')).toBe('loading');
        await expect(ips.loaded('Googlebot')).resolves.toBeUndefined();
        expect(ips.check('Googlebot', '66.249.64.1')).toBe('out');
      }
    });
  });

  it('survives a fetch that rejects with a value nothing can print, on a first load and on a background refresh', async () => {
    const unprintable = [
      Object.create(null),
      {
        get message(): string {
          throw new Error('no message');
        },
      },
      {
        toString(): string {
          throw new Error('no text');
        },
      },
    ];
    await expectNoUnhandledRejection(async () => {
      for (const value of unprintable) {
        let calls = 0;
        const fetch = (() =>
          calls++ === 0 ? Promise.resolve(ok()) : Promise.reject(value)) as typeof globalThis.fetch;
        const { ips, warnings, advance } = ipsWith(listServer(ok), { fetch, ttlMs: 1000 });
        ips.check('Googlebot', '66.249.64.1');
        await expect(ips.loaded('Googlebot')).resolves.toBeUndefined();
        advance(1001);
        expect(ips.check('Googlebot', '66.249.64.1')).toBe('in'); // starts the refresh, nobody awaiting it
        await expect(ips.loaded('Googlebot')).resolves.toBeUndefined();
        expect(warnings).toEqual([
          expect.stringMatching(/could not be loaded \(an error that cannot be read\)|could not be loaded/),
        ]);
      }
    });
  });

  it('refreshes after ttlMs in the background, keeping the old list through failures up to maxStaleMs', async () => {
    const server = listServer(ok, () => new Response('', { status: 503 }));
    const { ips, advance } = ipsWith(server, { ttlMs: 1000, maxStaleMs: 10_000, retryMs: 100 });
    ips.check('Googlebot', '66.249.64.1');
    await ips.loaded('Googlebot');
    advance(1001);
    expect(ips.check('Googlebot', '66.249.64.1')).toBe('in'); // the old list, while a refresh runs
    await ips.loaded('Googlebot');
    expect(server.calls).toHaveLength(2);
    expect(ips.check('Googlebot', '66.249.64.1')).toBe('in');
    advance(9000);
    // Stale beyond maxStaleMs: it no longer vouches, and a request waits for the refresh, which fails.
    expect(ips.check('Googlebot', '66.249.64.1')).toBe('loading');
    await ips.loaded('Googlebot');
    expect(ips.check('Googlebot', '66.249.64.1')).toBe('out');
  });

  it('takes sources added, replaced or turned off by name', async () => {
    const server = listServer(ok);
    const { ips } = ipsWith(server, {
      sources: { DuckDuckBot: 'https://ranges.test/ddg.json', Googlebot: false },
    });
    expect(ips.check('Googlebot', '66.249.64.1')).toBeUndefined();
    expect(ips.check('DuckDuckBot', '66.249.64.1')).toBe('loading');
    await ips.loaded('DuckDuckBot');
    expect(ips.check('DuckDuckBot', '66.249.64.1')).toBe('in');
    expect(server.calls).toEqual(['https://ranges.test/ddg.json']);
  });
});

describe('catalogueIpSources', () => {
  it('lists the catalogue crawlers whose operators publish their ranges, on https', () => {
    const sources = catalogueIpSources(BOT_CATALOGUE_ENTRIES);
    for (const name of ['Googlebot', 'bingbot', 'Applebot', 'GPTBot', 'OAI-SearchBot', 'PerplexityBot'])
      expect([name, sources.get(name)?.startsWith('https://')]).toEqual([name, true]);
    expect(sources.has('AhrefsBot')).toBe(false);
  });
});
