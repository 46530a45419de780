/*
 * A site's access-token secret leaks and the publisher rotates it. Whoever holds the old secret can
 * sign tokens for any path; a running gate must stop honouring it when the API does (at once for a
 * revoked secret, at the end of its grace period otherwise), not when the publisher next redeploys.
 * The real API, a real Fastify server with the gate, the local chain.
 */

import { randomUUID } from 'node:crypto';
import { SECRET_SETTLEMENT_MARGIN_SECONDS, signAccessToken, verifyGate } from '@crawlgate/core';
import { deadApiUrl, GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';
import { FRAMEWORKS, type SiteServer } from './support/site-servers';
import { rawRequest, type Answer } from './support/raw-request';

const fastify = FRAMEWORKS.find((framework) => framework.name === 'Fastify')!;
/** How often the gates of this file reload the site's terms. */
const REFRESH_MS = 200;
/** The grace period of the rotations that keep the previous secret. */
const GRACE_SECONDS = 600;

let gated: GatedSite;
const servers: SiteServer[] = [];
beforeAll(async () => {
  gated = await startGatedSite();
  await gated.setPricing({ default_price_usd: '0.01', rules: [] });
}, 60_000);
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await gated?.close();
}, 60_000);

async function gate(secret: string | string[]): Promise<SiteServer> {
  const server = await fastify.start(gated.options({ secret, refreshMs: REFRESH_MS }));
  servers.push(server);
  return server;
}

/** A token for `path` signed with `secret`, as anyone holding the secret can make one. */
function forged(path: string, secret: string): string {
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    gate_id: randomUUID(),
    site_id: gated.site.siteId,
    url: path,
    kid: 'any',
    iat: now,
    exp: now + 600,
  };
  return signAccessToken(payload, secret);
}

/** The new secret; `lastRetirement` is when the one it replaced stops verifying. */
let lastRetirement = 0;
async function rotate(graceSeconds: number): Promise<string> {
  const response = await gated.app.call('POST', `/v1/sites/${gated.site.siteId}/secret/rotate`, {
    body: { grace_seconds: graceSeconds },
    headers: gated.publisher.auth,
  });
  if (response.status !== 200) throw new Error(`rotation failed: ${response.status} ${JSON.stringify(response.body)}`);
  lastRetirement = Date.parse(response.body.previous_valid_until ?? '') || 0;
  return response.body.access_token_secret as string;
}

/** What the gate answers an unpaid bot for `path`. */
const unpaid = (server: SiteServer, path: string) => rawRequest(server, path, { 'user-agent': GPTBOT });
/** The gate offered to an unpaid bot for `path` (its 402 body). */
const offerAt = async (server: SiteServer, path: string) => JSON.parse((await unpaid(server, path)).text);
const bearer = (server: SiteServer, path: string, token: string) =>
  rawRequest(server, path, { 'user-agent': GPTBOT, authorization: `Bearer ${token}` });
const served = (answer: Answer) => answer.status === 200;
/** Long enough for every gate of this file to have reloaded the terms twice. */
const termsReloaded = () => new Promise((resolve) => setTimeout(resolve, REFRESH_MS * 3));

describe('a secret the publisher rotated away', () => {
  it('opens no page once it is revoked, on a gate still configured with it, and that gate takes no payment', async () => {
    const leaked = gated.site.secret;
    const stale = await gate(leaked);
    expect(served(await bearer(stale, '/articles/1', forged('/articles/1', leaked)))).toBe(true);

    const current = await rotate(0);
    await termsReloaded();
    const afterRevocation = await bearer(stale, '/articles/2', forged('/articles/2', leaked));
    expect(served(afterRevocation)).toBe(false);
    // Its 402s would offer gates signed with the revoked secret, which the API refuses: it offers none.
    const unpayable = await unpaid(stale, '/articles/3');
    expect(unpayable.status).toBe(503);
    expect(JSON.parse(unpayable.text).detail).toMatch(/access-token secret/);
    expect(gated.warnings.join('\n')).toMatch(/revoked/);

    // A gate redeployed with the new secret beside the leaked one: only the new one counts.
    const redeployed = await gate([leaked, current]);
    expect(served(await bearer(redeployed, '/articles/4', forged('/articles/4', leaked)))).toBe(false);
    expect(served(await bearer(redeployed, '/articles/5', forged('/articles/5', current)))).toBe(true);
    // Its gates are signed with the current secret, so a payment goes through and its token opens the page.
    const offer = await offerAt(redeployed, '/articles/6');
    const token = await gated.payThroughApi(offer);
    expect(served(await bearer(redeployed, '/articles/6', token))).toBe(true);
  }, 60_000);

  it('opens no token while the API is out of reach at start-up, whichever configured secret signed it', async () => {
    // The gate cannot learn what was revoked, the first configured secret included (helper-436):
    // until the API lists which verify, no token opens a page (503, as for other bots that must pay).
    const current = gated.site.secret;
    const leaked = 'cgsec_leaked-and-revoked-but-still-configured';
    const server = await fastify.start(
      gated.options({ secret: [current, leaked], apiUrl: await deadApiUrl(), refreshMs: REFRESH_MS }),
    );
    servers.push(server);
    expect(served(await bearer(server, '/articles/down-1', forged('/articles/down-1', leaked)))).toBe(false);
    expect(served(await bearer(server, '/articles/down-2', forged('/articles/down-2', current)))).toBe(false);
  }, 60_000);

  it('lets a gate holding only the previous secret sell pages through its grace period, then stops it', async () => {
    const previous = await rotate(0);
    const old = await gate([previous]);
    const current = await rotate(GRACE_SECONDS);
    await termsReloaded();
    expect(served(await bearer(old, '/articles/grace-1', forged('/articles/grace-1', previous)))).toBe(true);
    // Not yet redeployed, it still takes payments: the API signs each token with the secret that
    // signed its gate while that secret verifies, so the gate opens it.
    const offer = await offerAt(old, '/articles/grace-2');
    expect(verifyGate(offer.id, { secret: previous, siteId: gated.site.siteId }).valid).toBe(true);
    // Its gates expire while their payment can still settle before the secret retires.
    const settling = (gated.app.chain.settlementTimeoutMs / 1000 + SECRET_SETTLEMENT_MARGIN_SECONDS) * 1000;
    expect(Date.parse(offer.expires_at)).toBeLessThanOrEqual(lastRetirement - settling);
    expect(Date.parse(offer.expires_at)).toBeGreaterThan(Date.now());
    const paid = await rawRequest(old, '/articles/grace-2', {
      'user-agent': GPTBOT,
      'x-payment': await gated.xPayment(offer),
    });
    expect(paid.status).toBe(200);
    const token = paid.headers['x-crawlgate-token'] as string;
    expect(served(await bearer(old, '/articles/grace-2', token))).toBe(true);
    const throughApi = await offerAt(old, '/articles/grace-3');
    expect(served(await bearer(old, '/articles/grace-3', await gated.payThroughApi(throughApi)))).toBe(true);
    // Redeployed with both, it signs its gates with the current secret.
    const redeployed = await gate([previous, current]);
    const fresh = await offerAt(redeployed, '/articles/grace-4');
    expect(verifyGate(fresh.id, { secret: current, siteId: gated.site.siteId }).valid).toBe(true);
    expect(served(await bearer(redeployed, '/articles/grace-4', await gated.payThroughApi(fresh)))).toBe(true);

    // The grace period ends (a second rotation ends the first one's at once).
    await rotate(GRACE_SECONDS);
    await termsReloaded();
    // The previous secret opens nothing, and the gate that holds only it takes no payment.
    expect(served(await bearer(old, '/articles/grace-5', forged('/articles/grace-5', previous)))).toBe(false);
    expect(served(await bearer(old, '/articles/grace-2', token))).toBe(false);
    const unpayable = await unpaid(old, '/articles/grace-6');
    expect(unpayable.status).toBe(503);
    expect(served(await bearer(redeployed, '/articles/grace-7', forged('/articles/grace-7', previous)))).toBe(false);
    expect(served(await bearer(redeployed, '/articles/grace-8', forged('/articles/grace-8', current)))).toBe(true);
  }, 60_000);

  it('offers no gate signed with a secret too close to retiring for its payment to settle: 503, not 402s the API refuses', async () => {
    const previous = await rotate(0);
    const old = await gate([previous]);
    // A grace period shorter than a settlement and its margin.
    await rotate(Math.floor(gated.app.chain.settlementTimeoutMs / 1000) + SECRET_SETTLEMENT_MARGIN_SECONDS - 5);
    await termsReloaded();
    const unpayable = await unpaid(old, '/articles/short-1');
    expect(unpayable.status).toBe(503);
    // Its tokens still open pages until it retires.
    expect(served(await bearer(old, '/articles/short-2', forged('/articles/short-2', previous)))).toBe(true);
  }, 60_000);
});
