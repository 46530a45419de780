/*
 * An attacker's review of how the agent reads answers (a site's 402, its settlement header, the
 * API's verify answer): hostile shapes must never turn into a payment above the offer or budget,
 * to another recipient, or into "paid" without a confirmation. No chain, no server: a fake fetch.
 */

import {
  decodeBase64Json,
  encodeBase64Json,
  MAX_PAYMENT_ANSWER_BYTES,
  MAX_AUTHORIZATION_SECONDS,
  NETWORKS,
  type PaymentRequirementsV1,
} from '@crawlgate/core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { verifyAnswerOf, settlementOf, refusalOf } from './answers';
import { createAgent } from './agent';
import {
  HELD_PAGE_MARGIN_MS,
  MAX_HELD_PER_DOMAIN,
  MAX_HELD_PER_HOST,
  MAX_REFUSED_PAYMENTS,
} from './held-authorizations';
import { readOffers } from './offers';

const USDC = NETWORKS.base.usdc;
const PAY_TO = privateKeyToAccount(generatePrivateKey()).address;

const requirement = (overrides: Record<string, unknown> = {}): PaymentRequirementsV1 =>
  ({
    scheme: 'exact',
    network: 'base',
    maxAmountRequired: '1000',
    resource: 'https://site.test/page',
    description: 'a page',
    mimeType: 'text/html',
    payTo: PAY_TO,
    maxTimeoutSeconds: 60,
    asset: USDC.address!,
    extra: { name: USDC.name, version: USDC.version },
    ...overrides,
  }) as PaymentRequirementsV1;

/** A 402 whose body (x402 v1) is `body`, as JSON text, so hostile spellings survive. */
const challengeOf = (bodyText: string, headers: Record<string, string> = {}) =>
  new Response(bodyText, { status: 402, headers: { 'content-type': 'application/json', ...headers } });

describe('readOffers: hostile 402 bodies are no offer, never a coerced one', () => {
  it.each([
    ['an amount in exponent form', { maxAmountRequired: '1e3' }],
    ['a negative amount', { maxAmountRequired: '-1000' }],
    ['a fractional amount', { maxAmountRequired: '1000.5' }],
    ['an amount with a space', { maxAmountRequired: ' 1000' }],
    ['a hex amount', { maxAmountRequired: '0x3e8' }],
    ['an amount as a JSON number', { maxAmountRequired: 1000 }],
    ['an amount of 31 digits', { maxAmountRequired: '1'.repeat(31) }],
    ['an amount with a trailing newline', { maxAmountRequired: '1000\n' }],
    // Nothing to pay: yet the payment would be signed, counted and remembered (a site offering
    // thousands pushes out the agent's tokens and payments in doubt), or sent as a transfer that costs gas.
    ['an amount of zero', { maxAmountRequired: '0' }],
    ['an amount of zeros', { maxAmountRequired: '000' }],
    ['a payTo that is not an address', { payTo: `${PAY_TO}00` }],
    ['a payTo that is a list', { payTo: [PAY_TO] }],
    ['an asset that is a number', { asset: 1 }],
    ['a domain name that is not a string', { extra: { name: ['USD Coin'], version: '2' } }],
    ['another scheme', { scheme: 'upto' }],
    ['a network that is an object', { network: { toString: 'base' } }],
  ])('refuses %s', async (_name, overrides) => {
    const offers = await readOffers(challengeOf(JSON.stringify({ x402Version: 1, accepts: [requirement(overrides)] })));
    expect(offers).toEqual([]);
  });

  it('reads nothing from prototype keys: an offer hidden under __proto__ or constructor is no offer', async () => {
    const inner = JSON.stringify(requirement());
    const body = `{"x402Version":1,"__proto__":{"accepts":[${inner}]},"constructor":{"accepts":[${inner}]}}`;
    expect(await readOffers(challengeOf(body))).toEqual([]);
    const field = `{"x402Version":1,"accepts":[{"__proto__":${inner}}]}`;
    expect(await readOffers(challengeOf(field))).toEqual([]);
  });

  it('pays exactly the recipient and amount of the offer it read, and caps a huge timeout', async () => {
    // 1e400 parses to Infinity: it must not become an authorization valid forever.
    const text = JSON.stringify({ x402Version: 1, accepts: [requirement()] }).replace(
      '"maxTimeoutSeconds":60',
      '"maxTimeoutSeconds":1e400',
    );
    const [offer] = await readOffers(challengeOf(text));
    expect(offer).toMatchObject({ amount: 1000n, payTo: PAY_TO, asset: USDC.address });
    const account = privateKeyToAccount(generatePrivateKey());
    let paid: { payload: { authorization: { to: string; value: string; validBefore: string } } } | undefined;
    const fake = async (input: string | URL | Request, init?: RequestInit) => {
      const headers = new Headers(input instanceof Request ? input.headers : init?.headers);
      const header = headers.get('x-payment');
      if (!header) return challengeOf(text);
      paid = decodeBase64Json(header) as typeof paid;
      return new Response('page', { status: 200 });
    };
    const agent = createAgent({ account, maxPriceUsd: '0.01', budgetUsd: '1', fetch: fake as typeof fetch });
    await agent.fetch('https://site.test/page');
    expect(paid!.payload.authorization).toMatchObject({ to: PAY_TO, value: '1000' });
    expect(Number(paid!.payload.authorization.validBefore) - Date.now() / 1000).toBeLessThanOrEqual(301);
  });

  it('reads a timeout below a second as one second, never as an authorization valid before now', async () => {
    const [offer] = await readOffers(
      challengeOf(JSON.stringify({ x402Version: 1, accepts: [requirement({ maxTimeoutSeconds: 0.5 })] })),
    );
    expect(offer.maxTimeoutSeconds).toBe(1);
  });
});

describe('the settlement header and the verify answer: no coercion into "paid"', () => {
  it('ignores a success, reason or transaction of the wrong type', () => {
    const header = encodeBase64Json({ success: 'false', errorReason: 7, transaction: { hash: '0x' } });
    expect(settlementOf(header)).toEqual({});
    expect(settlementOf(encodeBase64Json([{ success: true }]))).toBeUndefined();
    expect(settlementOf('not base64 json')).toBeUndefined();
  });

  it('finds no access token in a number, an empty string, a list, or under __proto__', () => {
    for (const text of [
      '{"access_token":12345}',
      '{"access_token":""}',
      '{"access_token":["a.b"]}',
      '{"__proto__":{"access_token":"a.b"}}',
      '{"constructor":{"access_token":"a.b"}}',
      '["a.b"]',
      'null',
    ])
      expect(verifyAnswerOf(JSON.parse(text)).accessToken).toBeUndefined();
    expect(refusalOf(JSON.parse('{"__proto__":{"reason":"x"}}'))).toEqual({});
  });
});

describe('a site that answers a sent payment with a 402 (it holds the signed authorization)', () => {
  /*
   * FINDING (failing on purpose; not fixed here). payByAuthorization frees the budget reservation
   * when the answer to a sent payment is a 402 or success:false (agent.ts:236-237). But the site
   * already holds a valid EIP-3009 authorization (to payTo, for the amount, valid up to 300 s) and
   * can settle it on chain whatever it answers. A hostile site settles each one and answers 402:
   * every page the agent tries signs one more spendable authorization, without limit by the budget.
   * The batch-settlement deposit path already treats a refused deposit as still spendable (it stays
   * reserved, agent.ts:396-400); the exact path does not.
   */
  it('signs no more spendable authorizations than the budget covers', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const authorizations: { value: string; nonce: string }[] = [];
    const body = JSON.stringify({ x402Version: 1, accepts: [requirement()] });
    const fake = async (input: string | URL | Request, init?: RequestInit) => {
      const headers = new Headers(input instanceof Request ? input.headers : init?.headers);
      const header = headers.get('x-payment');
      if (!header) return challengeOf(body);
      // The site keeps the signed authorization (it could broadcast it now), then refuses.
      const payment = decodeBase64Json(header) as { payload: { authorization: { value: string; nonce: string } } };
      authorizations.push(payment.payload.authorization);
      return challengeOf(body, {
        'x-payment-response': encodeBase64Json({ success: false, errorReason: 'invalid_payload', transaction: '' }),
      });
    };
    // Budget for exactly one page of 0.001 USD.
    const agent = createAgent({ account, maxPriceUsd: '0.001', budgetUsd: '0.001', fetch: fake as typeof fetch });
    for (const page of ['/one', '/two', '/three']) await agent.fetch(`https://site.test${page}`).catch(() => undefined);

    const spendable = authorizations.reduce((sum, a) => sum + BigInt(a.value), 0n);
    expect(new Set(authorizations.map((a) => a.nonce)).size).toBe(authorizations.length);
    // What the site can take from the wallet must stay within the 1000 micro-USD budget.
    expect(spendable).toBeLessThanOrEqual(1000n);
  });

  /**
   * A site refusing every payment while it keeps the signed authorization; `redirect` answers a URL
   * before the 402 does. Records the payment headers it got.
   */
  function refusingSite(redirect: (url: URL) => string | undefined = () => undefined) {
    const authorizations: string[] = [];
    const body = JSON.stringify({ x402Version: 1, accepts: [requirement()] });
    const refused = encodeBase64Json({ success: false, errorReason: 'invalid_payload', transaction: '' });
    const fetch = async (input: string | URL | Request, init?: RequestInit) => {
      const request = new Request(input, init);
      const location = redirect(new URL(request.url));
      if (location) return new Response(null, { status: 302, headers: { location } });
      const header = request.headers.get('x-payment');
      if (header) authorizations.push(header);
      return challengeOf(body, header ? { 'x-payment-response': refused } : {});
    };
    const agent = createAgent({
      account: privateKeyToAccount(generatePrivateKey()),
      maxPriceUsd: '0.001',
      budgetUsd: '1',
      fetch: fetch as typeof globalThis.fetch,
    });
    return { agent, authorizations };
  }

  it('signs one authorization for a page while the site holds it: asked again, it pays nothing more', async () => {
    // Each fetch signed a new one, and a site refusing every payment ("try again") held the whole
    // budget for one page it never delivered.
    const { agent, authorizations } = refusingSite();
    await agent.fetch('https://site.test/page').catch(() => undefined);
    for (let i = 0; i < 3; i++)
      await expect(agent.fetch('https://site.test/page')).rejects.toMatchObject({ reason: 'payment_held' });
    expect(authorizations).toHaveLength(1);
    // Up to three pages of one host at once, whatever its ports and schemes; then none of it. Another site's is paid.
    await agent.fetch('https://site.test/other').catch(() => undefined);
    await agent.fetch('https://site.test:8443/third').catch(() => undefined);
    expect(authorizations).toHaveLength(3);
    await expect(agent.fetch('https://site.test:9443/fourth')).rejects.toMatchObject({ reason: 'payment_held' });
    expect(authorizations).toHaveLength(3);
    await agent.fetch('https://other.test/page').catch(() => undefined);
    expect(authorizations).toHaveLength(4);
  });

  it('signs one authorization for a URL that redirects to a new page on every fetch while the site holds it', async () => {
    // Held against the page that answered 402 alone, a URL redirecting to /page/1, /page/2, … got a
    // new authorization on each fetch, the whole budget held for one URL.
    let hops = 0;
    const { agent, authorizations } = refusingSite((url) =>
      url.hostname === 'evil.test' && url.pathname === '/page' ? `https://evil${++hops}.test/page/${hops}` : undefined,
    );
    for (let i = 0; i < 4; i++) await agent.fetch('https://evil.test/page').catch(() => undefined);
    expect(authorizations).toHaveLength(1);
  });

  it.each([
    ['victim.test', 'evil.test'],
    // Without a public suffix list both are co.uk's: one label more tells them apart (helper-362).
    ['victim.co.uk', 'evil.co.uk'],
  ])(
    "keeps %s's refused payment asked about before its page is paid anew, however many %s makes it keep",
    async (victim, evil) => {
      // Dropped oldest first when 1,000 were kept, a refused payment of one site was pushed out by
      // another's, made on its pages one hold after another: its page was then paid anew, unasked,
      // though the first payment may have gone through.
      jest.useFakeTimers({
        now: Date.now(),
        doNotFake: ['nextTick', 'setImmediate', 'setTimeout', 'clearTimeout', 'queueMicrotask'],
      });
      try {
        const asked: string[] = [];
        const body = (url: URL) =>
          JSON.stringify({
            x402Version: 1,
            accepts: [requirement({ maxAmountRequired: '1', resource: url.href })],
            verify_url: `${url.origin}/v1/gates/g/verify`,
          });
        const refused = encodeBase64Json({ success: false, errorReason: 'invalid_payload', transaction: '' });
        const fake = async (input: string | URL | Request, init?: RequestInit) => {
          const request = new Request(input, init);
          const url = new URL(request.url);
          if (url.pathname.endsWith('/verify')) {
            asked.push(url.hostname);
            return new Response('{}', { status: 500 });
          }
          return challengeOf(body(url), request.headers.get('x-payment') ? { 'x-payment-response': refused } : {});
        };
        const agent = createAgent({
          account: privateKeyToAccount(generatePrivateKey()),
          maxPriceUsd: '0.001',
          budgetUsd: '1',
          fetch: fake as typeof fetch,
        });
        await agent.fetch(`https://${victim}/page`).catch(() => undefined);
        // Six pages of its domain at a time (MAX_HELD_PER_DOMAIN), each held a minute past its authorization.
        const holdMs = 60_000 + HELD_PAGE_MARGIN_MS + 1_000;
        for (let page = 0; page < MAX_REFUSED_PAYMENTS; page++) {
          if (page % MAX_HELD_PER_DOMAIN === 0) jest.setSystemTime(Date.now() + holdMs);
          await agent.fetch(`https://p${page % MAX_HELD_PER_HOST}.${evil}/${page}`).catch(() => undefined);
        }
        expect(asked).not.toContain(victim);
        await agent.fetch(`https://${victim}/page`).catch(() => undefined);
        expect(asked).toContain(victim);
      } finally {
        jest.useRealTimers();
      }
    },
    60_000,
  );
});

describe('a site that answers every payment with a failure its API cannot clear up', () => {
  it('keeps every payment in doubt, and pays it no new page while 20 are: none is dropped and paid again, other sites are paid', async () => {
    // Each payment stays in doubt (the next fetch of its page asks before paying). Dropping the
    // oldest to make room let a site answering 1,000 payments so push out a real one elsewhere;
    // refusing every site once 1,000 were in doubt let it stop the agent paying anyone for days.
    const account = privateKeyToAccount(generatePrivateKey());
    const body = (url: URL) =>
      JSON.stringify({
        x402Version: 1,
        accepts: [requirement({ maxAmountRequired: '1', resource: url.href })],
        verify_url: `${url.origin}/v1/gates/g/verify`,
      });
    const sent: string[] = [];
    const fake = async (input: string | URL | Request, init?: RequestInit) => {
      const request = new Request(input, init);
      const url = new URL(request.url);
      if (url.pathname.endsWith('/verify')) return new Response('{}', { status: 500 });
      if (!request.headers.get('x-payment')) return challengeOf(body(url));
      sent.push(url.origin);
      if (url.hostname === 'honest.test') return new Response('page', { status: 200 });
      return new Response('down', { status: 500 });
    };
    const agent = createAgent({ account, maxPriceUsd: '0.001', budgetUsd: '1', fetch: fake as typeof fetch });
    for (let i = 0; i < 25; i++) await agent.fetch(`https://failing.test/p-${i}`).catch(() => undefined);
    expect(sent).toHaveLength(20);
    await expect(agent.fetch('https://failing.test/p-new')).rejects.toMatchObject({
      reason: 'too_many_in_doubt',
      message: expect.stringContaining('20 payments to failing.test (any port or scheme)'),
    });
    // The first page's payment is still asked about, not paid again.
    await agent.fetch('https://failing.test/p-0').catch(() => undefined);
    expect(sent).toHaveLength(20);
    // Another site is paid.
    expect((await agent.fetch('https://honest.test/a')).status).toBe(200);
    expect(sent).toHaveLength(21);
  });

  it('on host names of one domain (wildcard DNS), gets 40 payments in doubt in all, not 20 per host name: other sites are paid', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const sent: string[] = [];
    const fake = async (input: string | URL | Request, init?: RequestInit) => {
      const request = new Request(input, init);
      const url = new URL(request.url);
      if (url.pathname.endsWith('/verify')) return new Response('{}', { status: 500 });
      if (!request.headers.get('x-payment'))
        return challengeOf(
          JSON.stringify({
            x402Version: 1,
            accepts: [requirement({ maxAmountRequired: '1', resource: url.href })],
            verify_url: `${url.origin}/v1/gates/g/verify`,
          }),
        );
      sent.push(url.hostname);
      if (url.hostname === 'honest.test') return new Response('page', { status: 200 });
      return new Response('down', { status: 500 });
    };
    const agent = createAgent({ account, maxPriceUsd: '0.001', budgetUsd: '1', fetch: fake as typeof fetch });
    for (let host = 0; host < 3; host++)
      for (let i = 0; i < 20; i++) await agent.fetch(`https://h${host}.failing.test/p-${i}`).catch(() => undefined);
    expect(sent).toHaveLength(40);
    await expect(agent.fetch('https://h9.failing.test/p')).rejects.toMatchObject({
      reason: 'too_many_in_doubt',
      message: expect.stringContaining('40 payments to host names of failing.test'),
    });
    expect((await agent.fetch('https://honest.test/a')).status).toBe(200);
    expect(sent).toHaveLength(41);
  });

  it('reads a timeout of 1e400 as the longest an authorization may live, not for ever', async () => {
    const text = JSON.stringify({ x402Version: 1, accepts: [requirement()] }).replace(
      '"maxTimeoutSeconds":60',
      '"maxTimeoutSeconds":1e400',
    );
    const [offer] = await readOffers(challengeOf(text));
    expect(offer.maxTimeoutSeconds).toBe(MAX_AUTHORIZATION_SECONDS);
  });
});

describe('readOffers: the verify_url a 402 names is kept only where the agent may post', () => {
  /** A 402 as fetch gives it for `pageUrl`, naming `verifyUrl`. */
  const challengeFrom = (pageUrl: string, verifyUrl: string) => {
    const response = challengeOf(JSON.stringify({ x402Version: 1, accepts: [requirement()], verify_url: verifyUrl }));
    Object.defineProperty(response, 'url', { value: pageUrl });
    return response;
  };
  const kept = async (pageUrl: string, verifyUrl: string) =>
    (await readOffers(challengeFrom(pageUrl, verifyUrl)))[0]?.verifyUrl;

  it.each([
    ['https, from any site', 'https://site.example/page', 'https://api.example/v1/gates/g/verify'],
    [
      'plain http on loopback, from a site on loopback',
      'http://127.0.0.1:8080/page',
      'http://127.0.0.1:3000/v1/gates/g/verify',
    ],
    [
      'plain http on localhost, from a site on localhost',
      'http://localhost:8080/page',
      'http://localhost:3000/v1/gates/g/verify',
    ],
  ])('keeps %s', async (_name, pageUrl, verifyUrl) => {
    expect(await kept(pageUrl, verifyUrl)).toBe(verifyUrl);
  });

  it.each([
    ['plain http to a host of the network', 'https://site.example/page', 'http://10.0.0.1:9/v1/gates/g/verify'],
    ['plain http to this machine, from a remote site', 'https://site.example/page', 'http://127.0.0.1:2019/stop'],
    ['plain http to localhost, from a remote site', 'http://site.example/page', 'http://localhost:2019/stop'],
    ['plain http to loopback when the page is unknown', '', 'http://127.0.0.1:3000/v1/gates/g/verify'],
    ['another scheme', 'http://127.0.0.1:8080/page', 'file:///etc/passwd'],
    ['no URL at all', 'https://site.example/page', 'not a url'],
  ])('drops %s', async (_name, pageUrl, verifyUrl) => {
    expect(await kept(pageUrl, verifyUrl)).toBeUndefined();
  });
});

describe('readOffers: a 402 body is read up to MAX_PAYMENT_ANSWER_BYTES', () => {
  /** A 402 whose valid JSON body is padded with spaces to `bytes`, streamed without a length. */
  const padded = (bytes: number) => {
    const json = JSON.stringify({ x402Version: 1, accepts: [requirement()] });
    const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
    let left = bytes - json.length;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(json));
      },
      pull(controller) {
        if (left <= 0) return controller.close();
        const part = left >= chunk.length ? chunk : chunk.slice(0, left);
        left -= part.length;
        controller.enqueue(part);
      },
    });
    return new Response(body, { status: 402, headers: { 'content-type': 'application/json' } });
  };

  it('reads the offers of a body within the cap, and none of a larger one (it stops reading)', async () => {
    expect(await readOffers(padded(MAX_PAYMENT_ANSWER_BYTES))).toHaveLength(1);
    expect(await readOffers(padded(MAX_PAYMENT_ANSWER_BYTES + 1))).toEqual([]);
  });
});
