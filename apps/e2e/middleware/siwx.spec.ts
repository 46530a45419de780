/*
 * Re-access with x402's sign-in-with-x (SIWX): a wallet that paid for a path reads it again by
 * signing the 402's challenge, with no second transfer on chain. The real API, the Express adapter
 * on loopback, the local chain; the client is @x402/extensions' own wrapFetchWithSIWx (after
 * @x402/fetch + @x402/evm paid), its fetch routing the site's https domain to the loopback server.
 * Attacks first: replays, other paths, other wallets, expired and forged challenges, another site
 * of the same domain, and an API that is down or answers oddly. None of them ever gets the page.
 */

import { signSiwxNonce, siwxDeclaration, SIWX_CHALLENGE_SECONDS, decodeBase64Json } from '@crawlgate/core';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import {
  createSIWxPayload,
  encodeSIWxHeader,
  formatSIWEMessage,
  wrapFetchWithSIWx,
  type SIWxExtensionInfo,
} from '@x402/extensions/sign-in-with-x';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { PrivateKeyAccount } from 'viem/accounts';
import { createSite, namePayoutAddress, registerPublisher } from '../../../apps/api/test/fixtures';
import { newWallet, transfersTo } from '../../../apps/api/test/test-agent';
import type { CrawlgateOptions } from '../../../libs/middleware/src/crawlgate';
import { GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';
import { FRAMEWORKS, page, type SiteServer } from './support/site-servers';

const express = FRAMEWORKS.find((framework) => framework.name === 'Express')!;
let gated: GatedSite;
let server: SiteServer;
/** Another publisher's site on the same domain, with its own secret, on its own server. */
let twin: { options: CrawlgateOptions; server: SiteServer };
/** The API as the middleware under test reaches it: `apiMode` provokes failures of the SIWX call only. */
let apiMode: 'up' | 'down' | 'error' | 'hang' | 'empty' | 'other-token' = 'up';
let otherPathToken = '';
let guarded: SiteServer;

const domain = () => gated.site.domain;
const url = (path: string) => `https://${domain()}${path}`;

/** A fetch that sends the site's https URLs to a loopback server as GPTBot, and answers as the site would (its response url is the request's). */
function routedTo(target: () => SiteServer, seen: Headers[] = []): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const { host, pathname, search } = new URL(request.url);
    if (host !== domain()) throw new Error(`not routed: ${host}`);
    const headers = new Headers(request.headers);
    headers.set('user-agent', GPTBOT);
    seen.push(headers);
    const response = await fetch(target().url + pathname + search, { method: request.method, headers });
    return new Response(await response.arrayBuffer(), { status: response.status, headers: response.headers });
  };
}

const site = routedTo(() => server);

function payingClient(): typeof fetch {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: gated.agent });
  client.setSpendControls({
    allowedAssets: [
      { network: `eip155:${gated.app.chain.chainId}`, asset: gated.app.chain.usdc, maxAmountPerPayment: '100000' },
    ],
  });
  return wrapFetchWithPayment(site, client);
}

async function pay(path: string): Promise<Response> {
  const response = await payingClient()(url(path));
  expect(response.status).toBe(200);
  return response;
}

async function transfers(): Promise<number> {
  return (await transfersTo(gated.app, gated.payTo)).length;
}

/** The SIWX challenge of a fresh 402 for `path` on `target`. */
async function challenge(
  path: string,
  target = site,
): Promise<SIWxExtensionInfo & { chainId: string; type: 'eip191' }> {
  const response = await target(url(path));
  expect(response.status).toBe(402);
  const required = decodeBase64Json(response.headers.get('payment-required')!) as {
    extensions: Record<string, { info: SIWxExtensionInfo; supportedChains: { chainId: string; type: 'eip191' }[] }>;
  };
  const { info, supportedChains } = required.extensions['sign-in-with-x'];
  return { ...info, ...supportedChains[0] };
}

/** A SIGN-IN-WITH-X header as x402's client builds it, for a challenge (edited or not). */
async function proof(
  info: SIWxExtensionInfo & { chainId: string; type: 'eip191' },
  wallet: PrivateKeyAccount = gated.agent,
): Promise<string> {
  return encodeSIWxHeader(await createSIWxPayload(info, wallet, info.uri));
}

/** Sends a proof for `path` straight to the site, as a client that does not pay would. */
function present(path: string, header: string, target = site): Promise<Response> {
  return target(url(path), { headers: { 'sign-in-with-x': header } });
}

/** Never the page: a 402 (or 503) with no token. */
async function expectRefused(response: Response, path: string): Promise<void> {
  const body = await response.text();
  expect([402, 503]).toContain(response.status);
  expect(body).not.toContain(page(path.split('/').pop()!));
  expect(response.headers.get('x-crawlgate-token')).toBeNull();
}

beforeAll(async () => {
  gated = await startGatedSite();
  server = await express.start(gated.options());
  // The same domain, registered by another publisher: its own site id and secret.
  const publisher = await registerPublisher(gated.app);
  await namePayoutAddress(gated.app, publisher, gated.payee);
  const other = await createSite(gated.app, publisher, domain());
  const pricing = await gated.app.call('PUT', `/v1/sites/${other.siteId}/pricing`, {
    body: { default_price_usd: '0.01', rules: [] },
    headers: publisher.auth,
  });
  expect(pricing.status).toBe(200);
  const options = { ...gated.options(), siteId: other.siteId, siteToken: other.siteToken, secret: other.secret };
  twin = { options, server: await express.start(options) };
  guarded = await express.start(
    gated.options({
      fetch: async (input, init) => {
        const target = String(input instanceof Request ? input.url : input);
        if (!target.endsWith('/v1/access-tokens/siwx') || apiMode === 'up') return fetch(input, init);
        if (apiMode === 'down') throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
        if (apiMode === 'error') return Response.json({ detail: 'boom' }, { status: 500 });
        if (apiMode === 'empty') return Response.json({}, { status: 200 });
        if (apiMode === 'other-token')
          return Response.json(
            {
              access_token: otherPathToken,
              expires_at: new Date().toISOString(),
              url: '/articles/siwx-a',
              payer: gated.agent.address,
            },
            { status: 200 },
          );
        return new Promise<Response>((_resolve, reject) =>
          init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)),
        );
      },
      timeoutMs: 500,
    }),
  );
}, 60_000);
afterAll(async () => {
  await guarded?.close();
  await twin?.server.close();
  await server?.close();
  await gated?.close();
}, 60_000);

describe('a v2 client with SIWX (@x402/extensions wrapFetchWithSIWx)', () => {
  it('re-reads a paid page with no second transfer on chain, and gets the paid token again', async () => {
    const paid = await pay('/articles/siwx-a');
    expect(await paid.text()).toBe(page('siwx-a'));
    const token = paid.headers.get('x-crawlgate-token');
    expect(token).toBeTruthy();
    const afterPayment = await transfers();

    const sent: Headers[] = [];
    const reread = wrapFetchWithSIWx(
      routedTo(() => server, sent),
      gated.agent,
    );
    const again = await reread(url('/articles/siwx-a'));
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(page('siwx-a'));
    // The original token (same exp): access never outlasts what was paid.
    expect(again.headers.get('x-crawlgate-token')).toBe(token);
    expect(again.headers.get('cache-control')).toContain('no-store');
    expect(sent.map((headers) => headers.has('sign-in-with-x'))).toEqual([false, true]);
    expect(await transfers()).toBe(afterPayment);

    // The same proof again: refused (replay), and still nothing paid.
    await expectRefused(await present('/articles/siwx-a', sent[1].get('sign-in-with-x')!), '/articles/siwx-a');
    // A fresh challenge works again, as long as the token lives.
    const third = await reread(url('/articles/siwx-a'));
    expect(third.status).toBe(200);
    expect(await transfers()).toBe(afterPayment);
  });

  it('advertises the challenge bound to the domain, the path and five minutes', async () => {
    const info = await challenge('/articles/siwx-advertised');
    const now = Date.now();
    expect(info).toMatchObject({
      domain: domain(),
      uri: url('/articles/siwx-advertised'),
      version: '1',
      chainId: `eip155:${gated.app.chain.chainId}`,
      type: 'eip191',
    });
    expect(Date.parse(info.expirationTime!) - Date.parse(info.issuedAt)).toBe(SIWX_CHALLENGE_SECONDS * 1000);
    expect(Math.abs(Date.parse(info.expirationTime!) - now - SIWX_CHALLENGE_SECONDS * 1000)).toBeLessThan(10_000);
    expect((await challenge('/articles/siwx-advertised')).nonce).not.toBe(info.nonce);
  });
});

describe('refused, never the page', () => {
  const paidPath = '/articles/siwx-paid';
  beforeAll(async () => {
    await pay(paidPath);
    otherPathToken = (await pay('/articles/siwx-other')).headers.get('x-crawlgate-token')!;
  }, 60_000);

  it('a replayed proof, also when sent twice at once', async () => {
    const header = await proof(await challenge(paidPath));
    const [first, second] = await Promise.all([present(paidPath, header), present(paidPath, header)]);
    expect([first.status, second.status].sort()).toEqual([200, 402]);
    await expectRefused(await present(paidPath, header), paidPath);
  });

  it('a proof for another path: a paid path’s proof on an unpaid one, and a proof signed for the unpaid path', async () => {
    const before = await transfers();
    await expectRefused(
      await present('/articles/siwx-unpaid', await proof(await challenge(paidPath))),
      '/articles/siwx-unpaid',
    );
    await expectRefused(
      await present('/articles/siwx-unpaid', await proof(await challenge('/articles/siwx-unpaid'))),
      '/articles/siwx-unpaid',
    );
    // The challenge of one paid path does not open another paid path either.
    await expectRefused(
      await present('/articles/siwx-other', await proof(await challenge(paidPath))),
      '/articles/siwx-other',
    );
    expect(await transfers()).toBe(before);
  });

  it("another wallet's proof: one that never paid, one naming the payer's address, one for a path it never paid", async () => {
    const stranger = newWallet();
    await expectRefused(await present(paidPath, await proof(await challenge(paidPath), stranger)), paidPath);
    // The payer's address with a stranger's signature.
    const info = await challenge(paidPath);
    const forged = { ...(await createSIWxPayload(info, stranger, info.uri)), address: gated.agent.address };
    await expectRefused(await present(paidPath, encodeSIWxHeader(forged)), paidPath);
    await expectRefused(
      await present('/articles/siwx-stranger', await proof(await challenge('/articles/siwx-stranger'), stranger)),
      '/articles/siwx-stranger',
    );
  });

  it('an expired challenge, though its nonce is the site’s own', async () => {
    const exp = Math.floor(Date.now() / 1000) - 1;
    const nonce = signSiwxNonce({ siteId: gated.site.siteId, path: paidPath }, exp, gated.site.secret);
    const terms = { domain: domain(), path: paidPath, caip2: `eip155:${gated.app.chain.chainId}`, nonce, exp };
    const { info, supportedChains } = siwxDeclaration(terms);
    await expectRefused(await present(paidPath, await proof({ ...info, ...supportedChains[0] })), paidPath);
  });

  it('a forged nonce: made up, signed with another secret, or with a later expiry written in', async () => {
    const info = await challenge(paidPath);
    const exp = Math.floor(Date.now() / 1000) + 60;
    const scope = { siteId: gated.site.siteId, path: paidPath };
    const nonces = [
      'f'.repeat(info.nonce.length),
      signSiwxNonce(scope, exp, 'cgsec_not_the_site_secret'),
      info.nonce.slice(0, 32) + (exp + 86_400).toString(16).padStart(12, '0') + info.nonce.slice(44),
    ];
    for (const nonce of nonces) await expectRefused(await present(paidPath, await proof({ ...info, nonce })), paidPath);
    // Other fields of the challenge edited: the API rebuilds the message from what it expects.
    for (const edit of [
      { domain: 'evil.example.com' },
      { uri: url('/articles/siwx-unpaid') },
      { chainId: 'eip155:1' },
      { expirationTime: new Date(Date.now() + 86_400_000).toISOString() },
    ]) {
      const edited = { ...info, ...edit };
      const signature = await gated.agent.signMessage({ message: formatSIWEMessage(edited, gated.agent.address) });
      await expectRefused(
        await present(paidPath, encodeSIWxHeader({ ...edited, address: gated.agent.address, signature })),
        paidPath,
      );
    }
  });

  it('a proof against another site of the same domain (another publisher, another secret)', async () => {
    const twinSite = routedTo(() => twin.server);
    // The twin charges for the path, as the first site does.
    expect((await twinSite(url(paidPath))).status).toBe(402);
    const header = await proof(await challenge(paidPath));
    await expectRefused(await present(paidPath, header, twinSite), paidPath);
    // The twin's own challenge, signed by a wallet that paid only the first site.
    await expectRefused(await present(paidPath, await proof(await challenge(paidPath, twinSite)), twinSite), paidPath);
    // The proof was not spent by the failed attempt: on its own site it still works once.
    expect((await present(paidPath, header)).status).toBe(200);
  });

  it('the API down, failing, slow or answering oddly: 503 (not a 402 that asks a payer to pay again), never the page', async () => {
    const guardedSite = routedTo(() => guarded);
    // Sanity: the guarded server serves a good proof while its API is up.
    apiMode = 'up';
    expect((await present(paidPath, await proof(await challenge(paidPath, guardedSite)), guardedSite)).status).toBe(
      200,
    );
    for (const [mode, status] of [
      ['down', 503],
      ['error', 503],
      ['hang', 503],
      ['empty', 503],
      // A token that does not open the path: the wallet paid for it (a secret rotated meanwhile, say), so no 402 either.
      ['other-token', 503],
    ] as const) {
      apiMode = mode;
      const header = await proof(await challenge(paidPath, guardedSite));
      const answer = await present(paidPath, header, guardedSite);
      expect({ mode, status: answer.status }).toEqual({ mode, status });
      await expectRefused(answer, paidPath);
    }
    apiMode = 'up';
  });
});
