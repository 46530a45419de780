/*
 * Verified bots through the gate (Web Bot Auth), against the real API and chain, with the agents'
 * key directories served by real HTTP servers on loopback. https://chatgpt.com's directory is a
 * loopback server reached through the gate's directory fetch (webBotAuth.fetch), so the gate sees
 * the real origin and its https-only rule holds; the keys are ours.
 *
 * What an attacker tries first: a browser User-Agent with a broken, stale, future, foreign,
 * tampered or replayed signature; GPTBot's or ChatGPT-User's User-Agent with no signature; a
 * directory that is down, slow, huge or not JSON; a price header left out of the signature. None of
 * it is ever allowed (served free), and a person's request never waits for any of it.
 */

import {
  createWebBotAuthSigner,
  generateEd25519Jwk,
  jwkThumbprint,
  type CrawlerView,
  type Ed25519PrivateJwk,
} from '@crawlgate/core';
import { createAgent, type PaymentEvent } from '@crawlgate/agent';
import Redis from 'ioredis';
import { pricedSite } from '../../../apps/api/test/fixtures';
import { fundUsdc, newWallet } from '../../../apps/api/test/test-agent';
import type { BotPolicy } from '../../../libs/middleware/src/bots';
import { createCrawlgate, type Crawlgate, type CrawlgateOptions } from '../../../libs/middleware/src/crawlgate';
import { redisReplayStore, type ReplayStore } from '../../../libs/middleware/src/web-bot-auth';
import { KEY_DIRECTORY_USER_AGENT } from '../../../libs/middleware/src/web-bot-auth/node-directory-fetch';
import type { Decision } from '../../../libs/middleware/src/decision';
import { startAgentDirectory, type AgentDirectory } from '../../../libs/middleware/testing/agent-directory';
import { BROWSER, deadApiUrl, freePort, GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';
import { rawRequest } from './support/raw-request';
import { handSigned, type HandSigned } from '../../../libs/middleware/testing/signing';
import { FRAMEWORKS, page, type SiteServer } from './support/site-servers';

const CHATGPT = 'https://chatgpt.com';
const CHATGPT_USER =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';
const ATTACKER = 'attacker.example';
const ALLOW_SIGNED: BotPolicy = { bots: { 'ChatGPT agent': 'allow', 'ChatGPT-User': 'allow' } };

let gated: GatedSite;
/** The site's own domain, as the API holds it (the gate reads it with the site's terms). */
let SITE: string;
let chatgpt: AgentDirectory;
/** Directory fetches the gate made, by origin. */
const fetched: string[] = [];

/** The gate's directory fetch: https://chatgpt.com goes to the loopback server; anything else is refused, as no network is here. */
const directoryFetch: typeof fetch = async (input, init) => {
  const url = new URL(String(input));
  fetched.push(url.origin);
  if (url.origin !== CHATGPT) throw new TypeError(`not routed: ${url.origin}`);
  return fetch(chatgpt.origin + url.pathname, init);
};

beforeAll(async () => {
  gated = await startGatedSite();
  SITE = gated.site.domain;
}, 60_000);
afterAll(() => gated?.close());
beforeEach(async () => {
  chatgpt = await startAgentDirectory();
  fetched.length = 0;
});
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((thing) => thing.close()));
  await chatgpt.close();
});

function gateOptions(policy?: BotPolicy, overrides: Partial<CrawlgateOptions> = {}): CrawlgateOptions {
  // A timeout that never fires on a loaded machine; the slow directory's case sets a short one.
  return gated.options({
    policy,
    webBotAuth: { fetch: directoryFetch, directoryTimeoutMs: 10_000, allowLoopbackDirectories: true },
    ...overrides,
  });
}

function gate(
  policy?: BotPolicy,
  overrides: Partial<CrawlgateOptions> = {},
): Crawlgate & { visit(path: string, headers: Record<string, string>): Promise<Decision> } {
  const crawlgate = createCrawlgate(gateOptions(policy, overrides));
  opened.push(crawlgate);
  return Object.assign(crawlgate, {
    visit: (path: string, headers: Record<string, string>) =>
      crawlgate.handle({ method: 'GET', url: path, headers: { host: SITE, ...headers }, ip: '127.0.0.1' }),
  });
}

/** A request to https://<SITE><path> signed as ChatGPT agent signs (legacy string Signature-Agent, browser User-Agent). */
async function asChatgptAgent(path: string, options: Partial<HandSigned> = {}): Promise<Record<string, string>> {
  const headers = await handSigned({
    key: chatgpt.key,
    url: `https://${SITE}${path}`,
    agentHeader: `"${CHATGPT}"`,
    components: '("@authority" "@method" "@path" "signature-agent")',
    ...options,
  });
  return { 'user-agent': BROWSER, ...headers };
}

/** What ChatGPT agent sent when it fetched https://<host><path> (the attacker's site records it). */
const signedFor = (host: string, path: string, options: Partial<HandSigned> = {}) =>
  asChatgptAgent(path, { url: `https://${host}${path}`, ...options });

const status = (decision: Decision) => (decision.kind === 'respond' ? decision.status : decision.kind);
const now = () => Math.floor(Date.now() / 1000);

describe('a verified signature', () => {
  it('identifies ChatGPT agent behind a browser User-Agent: charged by default, allowed when the policy allows it', async () => {
    expect(status(await gate().visit('/articles/1', await asChatgptAgent('/articles/1')))).toBe(402);
    expect(await gate(ALLOW_SIGNED).visit('/articles/1', await asChatgptAgent('/articles/1'))).toEqual({
      kind: 'pass',
    });
  });

  it('identifies the signer whatever the User-Agent claims (GPTBot, blocked here, signed by chatgpt.com: ChatGPT agent)', async () => {
    const headers = { ...(await asChatgptAgent('/articles/1')), 'user-agent': GPTBOT };
    expect(
      await gate({ ...ALLOW_SIGNED, bots: { ...ALLOW_SIGNED.bots, GPTBot: 'block' } }).visit('/articles/1', headers),
    ).toEqual({ kind: 'pass' });
  });
});

describe('a signature that does not verify is never allowed (the policy allows ChatGPT agent)', () => {
  const stranger = () => generateEd25519Jwk();
  it.each<[string, () => Promise<{ path: string; headers: Record<string, string> }>]>([
    [
      'expired',
      async () => ({
        path: '/articles/1',
        headers: await asChatgptAgent('/articles/1', { created: now() - 600, expires: now() - 300 }),
      }),
    ],
    [
      'created in the future',
      async () => ({
        path: '/articles/1',
        headers: await asChatgptAgent('/articles/1', { created: now() + 600, expires: now() + 660 }),
      }),
    ],
    [
      'signed by another key under the directory key’s keyid',
      async () => {
        const key = await stranger();
        const params = `;created=${now()};expires=${now() + 60};keyid="${jwkThumbprint(chatgpt.key)}";nonce="x${Math.random()}";tag="web-bot-auth"`;
        return { path: '/articles/1', headers: await asChatgptAgent('/articles/1', { key, params }) };
      },
    ],
    [
      'signed by a key the directory does not list',
      async () => ({ path: '/articles/1', headers: await asChatgptAgent('/articles/1', { key: await stranger() }) }),
    ],
    [
      'signed for another path (tampered @path)',
      async () => ({ path: '/articles/2', headers: await asChatgptAgent('/articles/1') }),
    ],
    [
      'signed for another site (tampered @authority)',
      async () => ({
        path: '/articles/1',
        headers: await asChatgptAgent('/articles/1', { url: 'https://other.example/articles/1' }),
      }),
    ],
    [
      'with its Signature-Agent left unsigned',
      async () => ({
        path: '/articles/1',
        headers: await asChatgptAgent('/articles/1', { components: '("@authority" "@method" "@path")' }),
      }),
    ],
    [
      'not covering @path (usable on any path of the site)',
      async () => ({
        path: '/articles/2',
        headers: await asChatgptAgent('/articles/1', { components: '("@authority" "signature-agent")' }),
      }),
    ],
    [
      'not covering @path, on the path it was made for',
      async () => ({
        path: '/articles/1',
        headers: await asChatgptAgent('/articles/1', { components: '("@authority" "@method" "signature-agent")' }),
      }),
    ],
  ])('%s', async (_what, make) => {
    const { path, headers } = await make();
    expect(status(await gate(ALLOW_SIGNED).visit(path, headers))).toBe(402);
  });

  it('replayed: the same signed request a second time', async () => {
    const crawlgate = gate(ALLOW_SIGNED);
    const headers = await asChatgptAgent('/articles/1');
    expect(await crawlgate.visit('/articles/1', headers)).toEqual({ kind: 'pass' });
    expect(status(await crawlgate.visit('/articles/1', headers))).toBe(402);
  });

  it('replayed concurrently: only one copy passes', async () => {
    const crawlgate = gate(ALLOW_SIGNED);
    const headers = await asChatgptAgent('/articles/1');
    const answers = await Promise.all(Array.from({ length: 8 }, () => crawlgate.visit('/articles/1', headers)));
    expect(answers.filter((answer) => answer.kind === 'pass')).toHaveLength(1);
  });
});

describe('replayed to another server of the same site', () => {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 0 });
  const prefix = `crawlgate-e2e:${Date.now()}:`;
  afterAll(() => redis.quit());
  const withStore = (replayStore: ReplayStore, replayStoreTimeoutMs?: number) => ({
    webBotAuth: {
      fetch: directoryFetch,
      directoryTimeoutMs: 10_000,
      allowLoopbackDirectories: true,
      replayStore,
      replayStoreTimeoutMs,
    },
  });

  it('verifies again there when each server remembers alone: the gap a shared store closes', async () => {
    const headers = await asChatgptAgent('/articles/1');
    expect(await gate(ALLOW_SIGNED).visit('/articles/1', headers)).toEqual({ kind: 'pass' });
    expect(await gate(ALLOW_SIGNED).visit('/articles/1', headers)).toEqual({ kind: 'pass' });
  });

  it('is refused there when the servers share a replay store on Redis, also when both see it at once', async () => {
    const [one, other] = [0, 1].map(() => gate(ALLOW_SIGNED, withStore(redisReplayStore(redis, { prefix }))));
    const headers = await asChatgptAgent('/articles/1');
    expect(await one.visit('/articles/1', headers)).toEqual({ kind: 'pass' });
    expect(status(await other.visit('/articles/1', headers))).toBe(402);
    const again = await asChatgptAgent('/articles/2');
    const answers = await Promise.all([one, other, one, other].map((server) => server.visit('/articles/2', again)));
    expect(answers.filter((answer) => answer.kind === 'pass')).toHaveLength(1);
  });

  it('charges, never allows, when the replay store is down or too slow', async () => {
    const dead = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    const slow: ReplayStore = { claimOnce: () => new Promise((resolve) => setTimeout(resolve, 5000, true)) };
    try {
      for (const store of [redisReplayStore(dead), slow]) {
        const crawlgate = gate(ALLOW_SIGNED, withStore(store, 200));
        expect(status(await crawlgate.visit('/articles/3', await asChatgptAgent('/articles/3')))).toBe(402);
      }
    } finally {
      dead.disconnect();
    }
  });
});

describe('a signature made for another site (its @authority is not one of this site’s hosts)', () => {
  // ChatGPT agent fetched https://attacker.example/articles/7; the attacker replays what it sent,
  // within its lifetime, to this site with `Host: attacker.example`, which the frameworks serve.
  it('is charged when replayed here with the foreign Host; the site’s own host verifies', async () => {
    const crawlgate = gate(ALLOW_SIGNED);
    expect(
      status(await crawlgate.visit('/articles/7', { ...(await signedFor(ATTACKER, '/articles/7')), host: ATTACKER })),
    ).toBe(402);
    // The fetch adapter hands the gate an absolute URL: the same answer.
    const recorded = await signedFor(ATTACKER, '/articles/7');
    expect(
      status(await crawlgate.handle({ method: 'GET', url: `https://${ATTACKER}/articles/7`, headers: recorded })),
    ).toBe(402);
    expect(await crawlgate.visit('/articles/7', await signedFor(SITE, '/articles/7'))).toEqual({ kind: 'pass' });
    // In any case, with the default port, with the root's dot.
    expect(
      await crawlgate.visit('/articles/7', {
        ...(await signedFor(`${SITE.toUpperCase()}.:443`, '/articles/7')),
        host: `${SITE.toUpperCase()}.:443`,
      }),
    ).toEqual({ kind: 'pass' });
  });

  it('verifies on an alias listed in webBotAuth.hosts, and on no other', async () => {
    const hosts = [`WWW.${SITE}:443`, 'cdn.example:8443'];
    const crawlgate = gate(ALLOW_SIGNED, {
      webBotAuth: { fetch: directoryFetch, directoryTimeoutMs: 10_000, allowLoopbackDirectories: true, hosts },
    });
    for (const alias of [`www.${SITE}`, 'cdn.example:8443', SITE]) {
      expect(await crawlgate.visit('/articles/7', { ...(await signedFor(alias, '/articles/7')), host: alias })).toEqual(
        { kind: 'pass' },
      );
    }
    for (const foreign of [
      ATTACKER,
      'cdn.example',
      `cdn.example.${ATTACKER}`,
      `www.${SITE}:8443`,
      `${SITE}.${ATTACKER}`,
    ]) {
      expect(
        status(await crawlgate.visit('/articles/7', { ...(await signedFor(foreign, '/articles/7')), host: foreign })),
      ).toBe(402);
    }
    expect(() => gate(ALLOW_SIGNED, { webBotAuth: { hosts: ['https://www.example'] } })).toThrow(/webBotAuth.hosts/);
  });

  it('is never verified while the site’s domain is unknown (its terms never loaded), even signed for an alias', async () => {
    const apiUrl = await deadApiUrl();
    const webBotAuth = {
      fetch: directoryFetch,
      directoryTimeoutMs: 10_000,
      allowLoopbackDirectories: true,
      hosts: [SITE],
    };
    const crawlgate = gate(ALLOW_SIGNED, { apiUrl, failMode: 'closed', webBotAuth });
    expect(status(await crawlgate.visit('/articles/7', await signedFor(SITE, '/articles/7')))).toBe(503);
    expect(fetched).toEqual([]);
  });

  for (const framework of FRAMEWORKS) {
    it(`${framework.name}: the replay with Host ${ATTACKER} answers 402; the site’s own host is served`, async () => {
      const server = await framework.start(gateOptions(ALLOW_SIGNED));
      opened.push(server);
      const replay = await rawRequest(server, '/articles/7', {
        ...(await signedFor(ATTACKER, '/articles/7')),
        host: ATTACKER,
      });
      expect(replay.status).toBe(402);
      expect(replay.text).not.toContain(page('7'));
      const own = await rawRequest(server, '/articles/7', { ...(await signedFor(SITE, '/articles/7')), host: SITE });
      expect([own.status, own.text]).toEqual([200, page('7')]);
    }, 60_000);
  }
});

describe('key directories on Node', () => {
  // The adapters that only run on Node resolve the directory's host themselves and refuse private
  // addresses (node-directory-fetch.spec.ts); this shows they use that fetch when given none.
  const nodeOnly = FRAMEWORKS.filter((framework) =>
    ['Express', 'Fastify', 'NestJS (Fastify)'].includes(framework.name),
  );
  for (const framework of nodeOnly) {
    it(`${framework.name}: fetched by the checked Node fetch unless the options name one`, async () => {
      const agent = await startAgentDirectory();
      opened.push(agent);
      const server = await framework.start(
        gated.options({ webBotAuth: { directoryTimeoutMs: 10_000, allowLoopbackDirectories: true } }),
      );
      opened.push(server);
      const signed = await handSigned({ key: agent.key, url: `https://${SITE}/articles/8`, agent: agent.origin });
      await rawRequest(server, '/articles/8', { 'user-agent': BROWSER, ...signed, host: SITE });
      expect(agent.userAgents).toEqual([KEY_DIRECTORY_USER_AGENT]);
    }, 60_000);
  }
});

describe('unsigned requests claiming a crawler that signs, or must', () => {
  it('charges GPTBot’s User-Agent without a signature when the policy allows GPTBot but requires its signature', async () => {
    expect(await gate({ bots: { GPTBot: 'allow' } }).visit('/articles/1', { 'user-agent': GPTBOT })).toEqual({
      kind: 'pass',
    });
    expect(
      status(
        await gate({ bots: { GPTBot: 'allow' }, requireSignature: { bots: ['GPTBot'] } }).visit('/articles/1', {
          'user-agent': GPTBOT,
        }),
      ),
    ).toBe(402);
    expect(
      status(
        await gate({ categories: { 'ai-training': 'allow' }, requireSignature: { categories: ['ai-training'] } }).visit(
          '/articles/1',
          { 'user-agent': GPTBOT },
        ),
      ),
    ).toBe(402);
    expect(
      status(
        await gate({ bots: { GPTBot: 'block' }, requireSignature: { bots: ['GPTBot'] } }).visit('/articles/1', {
          'user-agent': GPTBOT,
        }),
      ),
    ).toBe(403);
  });

  it('applies require_signature stored through the API (PUT /v1/sites/{id}/bot-policy) as the code’s requireSignature', async () => {
    const { site, publisher } = await pricedSite(gated.app, newWallet().address);
    const store = async (body: unknown) =>
      expect(
        (await gated.app.call('PUT', `/v1/sites/${site.siteId}/bot-policy`, { body, headers: publisher.auth })).status,
      ).toBe(200);
    const gateOfSite = () => {
      const crawlgate = createCrawlgate({
        apiUrl: gated.app.baseUrl,
        siteId: site.siteId,
        siteToken: site.siteToken,
        secret: site.secret,
        logger: { warn: () => undefined },
        webBotAuth: { fetch: directoryFetch },
        crawlerIps: gated.options().crawlerIps,
      });
      opened.push(crawlgate);
      return (headers: Record<string, string>) =>
        crawlgate.handle({
          method: 'GET',
          url: '/articles/1',
          headers: { host: site.domain, ...headers },
          ip: '127.0.0.1',
        });
    };
    await store({ bots: { GPTBot: 'allow', 'ChatGPT agent': 'allow' } });
    expect(await gateOfSite()({ 'user-agent': GPTBOT })).toEqual({ kind: 'pass' });
    await store({ bots: { GPTBot: 'allow', 'ChatGPT agent': 'allow' }, require_signature: { bots: ['GPTBot'] } });
    const visit = gateOfSite();
    expect(status(await visit({ 'user-agent': GPTBOT }))).toBe(402);
    expect(await visit(await signedFor(site.domain, '/articles/1'))).toEqual({ kind: 'pass' });
  });

  it('charges ChatGPT-User’s User-Agent without a signature even when allowed; signed by chatgpt.com it is allowed', async () => {
    const crawlgate = gate(ALLOW_SIGNED);
    expect(status(await crawlgate.visit('/articles/1', { 'user-agent': CHATGPT_USER }))).toBe(402);
    expect(
      await crawlgate.visit('/articles/1', { ...(await asChatgptAgent('/articles/1')), 'user-agent': CHATGPT_USER }),
    ).toEqual({ kind: 'pass' });
  });
});

describe('other signatures', () => {
  it('leaves a request with another kind of RFC 9421 signature (a webhook’s) to its User-Agent, with no directory fetch', async () => {
    const webhook = {
      'user-agent': BROWSER,
      'signature-input': 'sig1=("@method" "content-digest");created=1;keyid="hook"',
      signature: 'sig1=:AAAA:',
    };
    expect(await gate().visit('/articles/1', webhook)).toEqual({ kind: 'pass' });
    expect(fetched).toEqual([]);
  });
});

describe('a key directory that fails', () => {
  it.each(['down', 'slow', 'huge', 'not-json', 'html', 'redirect'] as const)(
    '%s: the signed request is unverified and charged, a person passes without any directory fetch',
    async (mode) => {
      chatgpt.mode = mode;
      const crawlgate = gate(ALLOW_SIGNED, {
        webBotAuth: {
          fetch: directoryFetch,
          directoryTimeoutMs: mode === 'slow' ? 1000 : 10_000,
          directoryMaxBytes: 65_536,
        },
      });
      const signed = crawlgate.visit('/articles/1', await asChatgptAgent('/articles/1'));
      expect(await crawlgate.visit('/articles/1', { 'user-agent': BROWSER })).toEqual({ kind: 'pass' });
      expect(status(await signed)).toBe(402);
      expect(chatgpt.fetches).toBe(1);
      expect(await crawlgate.visit('/articles/2', { 'user-agent': BROWSER })).toEqual({ kind: 'pass' });
      expect(fetched).toEqual([CHATGPT]);
    },
  );
});

describe('Cloudflare’s rule: a signed request’s price header must be signed', () => {
  it('answers 400 InvalidSignature when it is not, and prices as usual when it is', async () => {
    const crawlgate = gate();
    const unsigned = await asChatgptAgent('/articles/1', { headers: { 'crawler-max-price': 'USD 0.05' } });
    const refused = await crawlgate.visit('/articles/1', unsigned);
    expect(refused).toMatchObject({ kind: 'respond', status: 400, headers: { 'crawler-error': 'InvalidSignature' } });
    const signedPrice = await asChatgptAgent('/articles/1', {
      headers: { 'crawler-max-price': 'USD 0.05' },
      components: '("@authority" "@method" "@path" "signature-agent" "crawler-max-price")',
    });
    expect(await crawlgate.visit('/articles/1', signedPrice)).toMatchObject({
      kind: 'respond',
      status: 402,
      headers: { 'crawler-price': 'USD 0.01' },
    });
    // Even a signature that does not verify must cover it: the request claims one.
    const broken = { ...unsigned, signature: 'sig1=:AAAA:' };
    expect(await crawlgate.visit('/articles/1', broken)).toMatchObject({
      status: 400,
      headers: { 'crawler-error': 'InvalidSignature' },
    });
  });
});

describe('crawler analytics', () => {
  it('counts verified requests as verified, and spoofed ones as not', async () => {
    // A site of its own on the same API, so the counts are only this crawl's.
    const { site, publisher } = await pricedSite(gated.app, newWallet().address);
    const crawlgate = createCrawlgate({
      apiUrl: gated.app.baseUrl,
      siteId: site.siteId,
      siteToken: site.siteToken,
      secret: site.secret,
      logger: { warn: () => undefined },
      webBotAuth: { fetch: directoryFetch, directoryTimeoutMs: 10_000 },
    });
    const visit = (headers: Record<string, string>) =>
      crawlgate.handle({ method: 'GET', url: '/articles/1', headers: { host: site.domain, ...headers } });
    expect(status(await visit(await signedFor(site.domain, '/articles/1')))).toBe(402);
    expect(status(await visit(await signedFor(site.domain, '/articles/1')))).toBe(402);
    expect(status(await visit({ 'user-agent': CHATGPT_USER }))).toBe(402);
    expect(await visit({ 'user-agent': BROWSER })).toEqual({ kind: 'pass' });
    await crawlgate.close();
    const answer = await gated.app.call('GET', `/v1/sites/${site.siteId}/crawlers`, { headers: publisher.auth });
    const byName = Object.fromEntries(
      (answer.body.crawlers as CrawlerView[]).map((crawler) => [crawler.crawler, crawler]),
    );
    expect(byName['ChatGPT agent']).toMatchObject({
      operator: 'OpenAI',
      category: 'ai-assistant',
      requests: 2,
      charged: 2,
      verified_share: '1.0000',
    });
    expect(byName['ChatGPT-User']).toMatchObject({
      operator: 'OpenAI',
      requests: 1,
      charged: 1,
      verified_share: '0.0000',
    });
    expect(byName.person).toMatchObject({ requests: 1, passed: 1 });
  });
});

describe('@crawlgate/agent signing, through real framework servers', () => {
  async function agentFor(key: Ed25519PrivateJwk | undefined, events: PaymentEvent[]) {
    const wallet = newWallet();
    await fundUsdc(gated.app, wallet.address, '1');
    return createAgent({
      account: wallet,
      maxPriceUsd: '0.05',
      budgetUsd: '1',
      networks: [{ network: 'local', asset: gated.app.chain.usdc }],
      onPayment: (event) => events.push(event),
      webBotAuth: key ? { key, signatureAgent: CHATGPT } : undefined,
    });
  }

  /** The agent signs for http://127.0.0.1:<port>: that host is the site's alias here (webBotAuth.hosts). */
  async function loopbackSite(name: string, policy?: BotPolicy): Promise<SiteServer> {
    const port = await freePort();
    const webBotAuth = {
      fetch: directoryFetch,
      directoryTimeoutMs: 10_000,
      allowLoopbackDirectories: true,
      hosts: [`127.0.0.1:${port}`],
    };
    const server = await FRAMEWORKS.find((framework) => framework.name === name)!.start(
      gateOptions(policy, { webBotAuth }),
      port,
    );
    opened.push(server);
    return server;
  }

  for (const name of ['Express', 'Fastify', 'fetch (Hono)', 'NestJS (Fastify)']) {
    it(`${name}: a signed agent is ChatGPT agent (allowed here, unpaid) whatever its User-Agent; unsigned, its GPTBot User-Agent pays (signature required)`, async () => {
      const server = await loopbackSite(name, {
        bots: { 'ChatGPT agent': 'allow', GPTBot: 'allow' },
        requireSignature: { bots: ['GPTBot'] },
      });
      const events: PaymentEvent[] = [];
      const signed = await (
        await agentFor(chatgpt.key, events)
      ).fetch(`${server.url}/articles/7`, { headers: { 'user-agent': GPTBOT } });
      expect([signed.status, await signed.text(), events]).toEqual([200, page('7'), []]);

      const unsigned = await (
        await agentFor(undefined, events)
      ).fetch(`${server.url}/articles/7`, { headers: { 'user-agent': GPTBOT } });
      expect([unsigned.status, await unsigned.text()]).toEqual([200, page('7')]);
      expect(events).toEqual([expect.objectContaining({ priceUsd: '0.01' })]);
    }, 90_000); // a payment settled on the local chain: slow on a loaded machine
  }

  it('Express: a signed agent that must pay pays, and sends its price header signed', async () => {
    const server = await loopbackSite('Express');
    const events: PaymentEvent[] = [];
    const agent = await agentFor(chatgpt.key, events);
    const paid = await agent.fetch(`${server.url}/articles/8`, { headers: { 'crawler-max-price': 'USD 0.05' } });
    expect([paid.status, await paid.text(), paid.headers.get('crawler-charged')]).toEqual([200, page('8'), 'USD 0.01']);
    expect(events).toHaveLength(1);
  }, 90_000);

  it('refuses the key directory of a signer that is not an https origin (the agent cannot even sign as one)', async () => {
    const key = await generateEd25519Jwk();
    expect(() => createWebBotAuthSigner({ key, signatureAgent: chatgpt.origin })).toThrow(/https origin/);
  });
});
