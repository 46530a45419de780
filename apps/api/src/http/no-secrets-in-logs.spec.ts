import { randomUUID } from 'node:crypto';
import { freshIp, openGate, pricedSite } from '../../test/fixtures';
import { fundUsdc, newWallet, signPayment } from '../../test/test-agent';
import { startTestApp, type TestApp } from '../../test/test-app';

/**
 * Everything the API writes while it handles real keys, tokens, secrets and passwords, at debug
 * level and through its failures too, must contain none of them.
 */
describe('no secret or key in the logs', () => {
  let app: TestApp;
  const written: string[] = [];
  const originals = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };

  beforeAll(async () => {
    const capture = (chunk: unknown) => {
      written.push(String(chunk));
      return true;
    };
    process.stdout.write = capture as typeof process.stdout.write;
    process.stderr.write = capture as typeof process.stderr.write;
    app = await startTestApp({ isolateChain: true, config: { logLevel: 'debug' } });
  });
  afterAll(async () => {
    await app.close();
    process.stdout.write = originals.out;
    process.stderr.write = originals.err;
  });

  it('holds through a whole flow, its failures included', async () => {
    const password = `pw-${randomUUID()}`;
    const email = `log-${randomUUID()}@example.com`;
    const registered = await app.call('POST', '/v1/publishers/register', {
      body: { email, password },
      headers: { 'x-forwarded-for': freshIp() },
    });
    const login = await app.call('POST', '/v1/publishers/login', {
      body: { email, password },
      headers: { 'x-forwarded-for': freshIp() },
    });
    await app.call('POST', '/v1/publishers/login', {
      body: { email, password: `${password}-wrong` },
      headers: { 'x-forwarded-for': freshIp() },
    });
    const auth = { authorization: `Bearer ${login.body.api_key}` };
    await app.call('PATCH', '/v1/publishers/me', {
      body: { payout_address: newWallet().address },
      headers: { ...auth, 'x-confirm-password': `${password}-wrong` },
    });
    const site = await app.call('POST', '/v1/sites', { body: { domain: 'logs.example.com' }, headers: auth });
    const rotated = await app.call('POST', `/v1/sites/${site.body.site_id}/secret/rotate`, { headers: auth });
    const newToken = await app.call('POST', `/v1/sites/${site.body.site_id}/site-token/rotate`, { headers: auth });

    const { site: paidSite } = await pricedSite(app, newWallet().address);
    const agent = newWallet();
    await fundUsdc(app, agent.address, '1');
    const gate = await openGate(app, paidSite, '/logs/paid');
    const paid = await app.call('POST', `/v1/gates/${gate.id}/verify`, {
      body: { payment: await signPayment(app, agent, gate) },
    });
    await app.call('POST', '/v1/access-tokens/verify', {
      body: { token: paid.body.access_token },
      headers: { 'x-site-token': paidSite.siteToken },
    });
    await app.call('POST', '/v1/access-tokens/verify', {
      body: { token: paid.body.access_token },
      headers: { 'x-site-token': site.body.site_token },
    }); // rotated away: 401
    await app.call('GET', '/v1/publishers/me', { headers: { authorization: `Bearer ${registered.body.api_key}` } }); // rotated by login: 401

    const secrets = [
      password,
      registered.body.api_key,
      login.body.api_key,
      site.body.site_token,
      newToken.body.site_token,
      site.body.access_token_secret,
      rotated.body.access_token_secret,
      paidSite.siteToken,
      paidSite.secret,
      paid.body.access_token,
    ];
    expect(secrets.every((secret) => typeof secret === 'string' && secret.length > 20)).toBe(true);
    const output = written.join('');
    expect(output.length).toBeGreaterThan(0); // debug logging did write something
    for (const secret of secrets) expect(output).not.toContain(secret);
  });
});
