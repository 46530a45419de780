/*
 * A site's access-token secret leaks and the publisher rotates it. Whoever holds the old secret can
 * sign tokens for any path; a running gate must stop honouring it when the API does (at once for a
 * revoked secret, at the end of its grace period otherwise), not when the publisher next redeploys.
 * The real API, a real Fastify server with the gate, the local chain.
 */

import { randomUUID } from 'node:crypto';
import { signAccessToken } from '@crawlgate/core';
import { GPTBOT, startGatedSite, type GatedSite } from './support/gated-site';
import { FRAMEWORKS, type SiteServer } from './support/site-servers';
import { rawRequest, type Answer } from './support/raw-request';

const fastify = FRAMEWORKS.find((framework) => framework.name === 'Fastify')!;
/** How often the gates of this file reload the site's terms. */
const REFRESH_MS = 200;

let gated: GatedSite;
const servers: SiteServer[] = [];
beforeAll(async () => {
  gated = await startGatedSite();
  await gated.setPricing({ default_price_usd: '0.01', rules: [] });
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await gated?.close();
});

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

async function rotate(graceSeconds: number): Promise<string> {
  const response = await gated.app.call('POST', `/v1/sites/${gated.site.siteId}/secret/rotate`, {
    body: { grace_seconds: graceSeconds },
    headers: gated.publisher.auth,
  });
  if (response.status !== 200) throw new Error(`rotation failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.access_token_secret as string;
}

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
    const unpaid = await rawRequest(stale, '/articles/3', { 'user-agent': GPTBOT });
    expect(unpaid.status).toBe(503);
    expect(JSON.parse(unpaid.text).detail).toMatch(/current access-token secret/);
    expect(gated.warnings.join('\n')).toMatch(/revoked/);

    // A gate redeployed with the new secret beside the leaked one: only the new one counts.
    const redeployed = await gate([leaked, current]);
    expect(served(await bearer(redeployed, '/articles/4', forged('/articles/4', leaked)))).toBe(false);
    expect(served(await bearer(redeployed, '/articles/5', forged('/articles/5', current)))).toBe(true);
    // Its gates are signed with the current secret, so a payment goes through and its token opens the page.
    const offer = JSON.parse((await rawRequest(redeployed, '/articles/6', { 'user-agent': GPTBOT })).text);
    const token = await gated.payThroughApi(offer);
    expect(served(await bearer(redeployed, '/articles/6', token))).toBe(true);
  });

  it('honours a secret in its grace period until the period ends, then no longer', async () => {
    const previous = (await rotate(0)) as string;
    const both = await gate([previous]);
    const current = await rotate(3);
    await termsReloaded();
    const inGrace = await bearer(both, '/articles/grace-1', forged('/articles/grace-1', previous));
    expect(served(inGrace)).toBe(true);
    // The API signs new tokens with the current secret, which this gate does not hold: a payment
    // taken here would be charged and its token refused. It offers no gate until redeployed.
    const unpayable = await rawRequest(both, '/articles/grace-1b', { 'user-agent': GPTBOT });
    expect(unpayable.status).toBe(503);
    expect(JSON.parse(unpayable.text).detail).toMatch(/current access-token secret/);
    // Gates are signed with the current secret as soon as the gate knows it, not with the one retiring.
    const withBoth = await gate([previous, current]);
    const offer = JSON.parse((await rawRequest(withBoth, '/articles/grace-2', { 'user-agent': GPTBOT })).text);
    const token = await gated.payThroughApi(offer);
    expect(served(await bearer(withBoth, '/articles/grace-2', token))).toBe(true);

    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await termsReloaded();
    expect(served(await bearer(both, '/articles/grace-3', forged('/articles/grace-3', previous)))).toBe(false);
    expect(served(await bearer(withBoth, '/articles/grace-4', forged('/articles/grace-4', previous)))).toBe(false);
    expect(served(await bearer(withBoth, '/articles/grace-5', forged('/articles/grace-5', current)))).toBe(true);
  });
});
