import { inspect } from 'node:util';
import { payoutProofMessage } from '@crawlgate/core';
import { ApiError, payoutProofMessageOf, PublisherClient, type CreatedSite } from '@crawlgate/publisher';
import { newWallet } from '../../../apps/api/test/test-agent';
import { startTestApp, type TestApp } from '../../../apps/api/test/test-app';
import { insertPayment, newAddress } from '../../../apps/api/src/reporting/test-payments';
import { fetchFromFreshIp, newDomain, newEmail, PASSWORD, pricingView } from './support';

const PAYOUT = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

/** Runs `call` and returns the ApiError it must throw. */
async function failure(call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('PublisherClient against the API', () => {
  let app: TestApp;
  let client: PublisherClient;
  let email: string;
  beforeAll(async () => {
    app = await startTestApp();
    email = newEmail();
    client = new PublisherClient({ apiUrl: app.baseUrl, fetch: fetchFromFreshIp() });
  }, 60_000);
  afterAll(() => app.close());

  describe('account', () => {
    let registeredKey: string;

    it('register returns the publisher and a key, which the client then uses', async () => {
      expect(client.hasApiKey).toBe(false);
      const publisher = await client.register({ email, password: PASSWORD, name: 'SDK News' });
      expect(publisher).toEqual({
        publisher_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        email,
        name: 'SDK News',
        payout_address: null,
        payout_address_proven: false,
        created_at: expect.any(String),
        api_key: expect.stringMatching(/^xk_pub_/),
      });
      registeredKey = publisher.api_key;
      expect(client.hasApiKey).toBe(true);
      expect((await client.me()).email).toBe(email);
    });

    it('login issues a new key and stores it; the previous key is refused with 401', async () => {
      const issued = await client.login({ email, password: PASSWORD });
      expect(issued.api_key).toMatch(/^xk_pub_/);
      expect(issued.api_key).not.toBe(registeredKey);
      expect(await client.me()).toMatchObject({ publisher_id: issued.publisher_id, email });

      const stale = new PublisherClient({ apiUrl: app.baseUrl, apiKey: registeredKey });
      const error = await failure(stale.me());
      expect(error.status).toBe(401);
      expect(typeof error.detail).toBe('string');
      expect(error.items).toBeUndefined();
    });

    it('login with a wrong password is a 401 ApiError', async () => {
      const other = new PublisherClient({ apiUrl: app.baseUrl, fetch: fetchFromFreshIp() });
      const error = await failure(other.login({ email, password: 'wrong password' }));
      expect(error).toMatchObject({
        status: 401,
        detail: 'Invalid email or password',
        message: 'Invalid email or password',
      });
      expect(other.hasApiKey).toBe(false);
    });

    it('updateMe changes the name without a password, and the payout address only with it', async () => {
      expect(await client.updateMe({ name: 'Renamed' })).toMatchObject({ name: 'Renamed', payout_address: null });

      const without = await failure(client.updateMe({ payout_address: PAYOUT.toLowerCase() }));
      expect(without.status).toBe(401);
      expect(without.detail).toMatch(/X-Confirm-Password/);
      const wrong = await failure(client.updateMe({ payout_address: PAYOUT }, { password: 'not the password' }));
      expect(wrong.status).toBe(401);

      const updated = await client.updateMe({ payout_address: PAYOUT.toLowerCase() }, { password: PASSWORD });
      expect(updated.payout_address).toBe(PAYOUT);
      expect((await client.me()).payout_address).toBe(PAYOUT);
    });

    it('updateMe confirms with any password, spaces at its ends and letters beyond Latin-1 included', async () => {
      // fetch refuses such characters in a header, and HTTP drops the spaces: the client encodes it (RFC 8187).
      const password = ' пароль с пробелом ';
      const other = new PublisherClient({ apiUrl: app.baseUrl, fetch: fetchFromFreshIp() });
      await other.register({ email: newEmail(), password });
      // An address of its own: PAYOUT is the first publisher's.
      const address = newWallet().address;
      const updated = await other.updateMe({ payout_address: address }, { password });
      expect(updated.payout_address).toBe(address);
    });

    it('updateMe of an address another publisher names: a 409 with the text to sign, then payout_proof takes it', async () => {
      const wallet = newWallet();
      const password = 'another password';
      const signUp = async () => {
        const publisher = new PublisherClient({ apiUrl: app.baseUrl, fetch: fetchFromFreshIp() });
        const { publisher_id } = await publisher.register({ email: newEmail(), password });
        return { publisher, publisher_id };
      };
      const first = await signUp();
      expect((await first.publisher.updateMe({ payout_address: wallet.address }, { password })).payout_address).toBe(
        wallet.address,
      );
      const second = await signUp();
      const refused = await failure(second.publisher.updateMe({ payout_address: wallet.address }, { password }));
      expect(refused.status).toBe(409);
      const message = payoutProofMessageOf(refused);
      expect(message).toBe(payoutProofMessage(wallet.address, second.publisher_id));
      const payout_proof = await wallet.signMessage({ message: message! });
      expect(
        await second.publisher.updateMe({ payout_address: wallet.address, payout_proof }, { password }),
      ).toMatchObject({ payout_address: wallet.address, payout_address_proven: true });
      // The first publisher named it without a proof: the proof took it.
      expect((await first.publisher.me()).payout_address).toBeNull();
    });

    it('rotateApiKey switches the client to the new key', async () => {
      const before = await client.me();
      const rotated = await client.rotateApiKey();
      expect(rotated).toEqual({ publisher_id: before.publisher_id, api_key: expect.stringMatching(/^xk_pub_/) });
      expect(await client.me()).toEqual(before);
      expect((await failure(new PublisherClient({ apiUrl: app.baseUrl }).me())).status).toBe(401);
    });

    it('changePassword switches the client to the new key; the old key ends with the old password', async () => {
      const before = await client.me();
      const oldKey = new PublisherClient({ apiUrl: app.baseUrl, apiKey: (await client.rotateApiKey()).api_key });
      const refused = await failure(
        client.changePassword({ current_password: 'not the password', new_password: PASSWORD }),
      );
      expect(refused.status).toBe(401);
      const changed = await client.changePassword({ current_password: PASSWORD, new_password: `${PASSWORD} again` });
      expect(changed).toEqual({ publisher_id: before.publisher_id, api_key: expect.stringMatching(/^xk_pub_/) });
      expect(await client.me()).toEqual(before);
      expect((await failure(oldKey.me())).status).toBe(401);
      await client.changePassword({ current_password: `${PASSWORD} again`, new_password: PASSWORD });
    });

    it('register of a taken email is a 409; bad fields are a 422 with every item', async () => {
      const other = new PublisherClient({ apiUrl: app.baseUrl, fetch: fetchFromFreshIp() });
      const taken = await failure(other.register({ email: email.toUpperCase(), password: PASSWORD }));
      expect(taken.status).toBe(409);
      expect(taken.detail).toMatch(/already registered/);

      const invalid = await failure(other.register({ email: 'not-an-email', password: 'short' }));
      expect(invalid.status).toBe(422);
      expect(invalid.items).toBe(invalid.detail);
      expect(invalid.items).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            loc: ['body', 'email'],
            type: 'email_format',
            input: 'not-an-email',
            msg: expect.any(String),
          }),
          expect.objectContaining({ loc: ['body', 'password'], type: 'string_too_short' }),
        ]),
      );
      expect(invalid.message).toMatch(/body\.email: /);
    });

    it('never exposes the key through the client object', () => {
      const text = `${JSON.stringify(client)} ${Object.keys(client).join()} ${inspect(client)}`;
      expect(text).not.toMatch(/xk_pub_/);
    });
  });

  describe('sites', () => {
    let site: CreatedSite;

    it('createSite shows the site token, secret and kid once', async () => {
      site = await client.createSite({ domain: `  ${newDomain().toUpperCase()}  `, name: 'Blog' });
      expect(site).toEqual({
        site_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        domain: expect.stringMatching(/^[0-9a-f]{8}\.example\.com$/),
        name: 'Blog',
        default_price_usd: '0',
        rules_count: 0,
        batch_settlement: false,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        site_token: expect.stringMatching(/^st_/),
        access_token_secret: expect.stringMatching(/^cgsec_/),
        kid: expect.any(String),
      });
    });

    it('listSites and getSite show it without secrets', async () => {
      const { site_token, access_token_secret, kid, ...view } = site;
      expect(await client.getSite(site.site_id)).toEqual(view);
      const list = await client.listSites();
      expect(list.items).toContainEqual(view);
      expect(JSON.stringify(list)).not.toContain(site_token);
      expect(JSON.stringify(list)).not.toContain(access_token_secret);
      expect(kid).toBeTruthy();
    });

    it('updateSite changes the name; a taken domain is 409', async () => {
      expect(await client.updateSite(site.site_id, { name: null })).toMatchObject({
        site_id: site.site_id,
        name: null,
      });
      const error = await failure(client.createSite({ domain: site.domain }));
      expect(error.status).toBe(409);
      expect(typeof error.detail).toBe('string');
    });

    it('rotateSiteToken and rotateSecret issue new credentials; the old secret stays listed', async () => {
      const token = await client.rotateSiteToken(site.site_id);
      expect(token).toEqual({ site_id: site.site_id, site_token: expect.stringMatching(/^st_/) });
      expect(token.site_token).not.toBe(site.site_token);

      const secret = await client.rotateSecret(site.site_id);
      expect(secret).toEqual({
        site_id: site.site_id,
        access_token_secret: expect.stringMatching(/^cgsec_/),
        kid: expect.any(String),
        previous_kids: [site.kid],
        previous_valid_until: expect.any(String),
      });
      expect(secret.kid).not.toBe(site.kid);
    });

    it('rotateSecret with graceSeconds 0 revokes the previous secret at once; a grace past the limit is 422', async () => {
      const revoked = await client.rotateSecret(site.site_id, { graceSeconds: 0 });
      expect(revoked).toMatchObject({ previous_kids: [], previous_valid_until: null });
      const before = Date.now();
      const graced = await client.rotateSecret(site.site_id, { graceSeconds: 60 });
      expect(graced.previous_kids).toEqual([revoked.kid]);
      expect(Date.parse(graced.previous_valid_until!) - before).toBeGreaterThan(55_000);
      expect(Date.parse(graced.previous_valid_until!) - before).toBeLessThan(65_000);
      const tooLong = await failure(client.rotateSecret(site.site_id, { graceSeconds: 10 ** 9 }));
      expect(tooLong.status).toBe(422);
    });

    it('an unknown site is 404, and a crafted id cannot reach another path', async () => {
      expect((await failure(client.getSite('00000000-0000-4000-8000-000000000000'))).status).toBe(404);
      const crafted = await failure(client.getSite('../publishers/me'));
      expect(crafted.status).toBe(404);
      // A dot segment, escaped or not, is resolved by the URL parser ('.' read the site list, '..'
      // another route): refused before any request.
      for (const id of ['.', '..']) expect(() => client.getSite(id)).toThrow(RangeError);
      expect(() => client.siteStats('..')).toThrow(RangeError);
    });

    it('deleteSite removes it', async () => {
      const doomed = await client.createSite({ domain: newDomain() });
      expect(await client.deleteSite(doomed.site_id)).toEqual({ site_id: doomed.site_id, deleted: true });
      expect((await failure(client.getSite(doomed.site_id))).status).toBe(404);
      expect((await client.listSites()).items.map((s) => s.site_id)).not.toContain(doomed.site_id);
    });
  });

  describe('pricing', () => {
    let siteId: string;
    beforeAll(async () => {
      siteId = (await client.createSite({ domain: newDomain() })).site_id;
    });

    it('setPricing replaces the rules; getPricing shows them as decimal strings', async () => {
      const applied = await client.setPricing(siteId, {
        default_price_usd: 0.002,
        rules: [
          { path: '/blog/*', price_usd: '0.0100' },
          { path: '/free/*', price_usd: 0 },
        ],
      });
      expect(applied).toEqual({ rules_applied: 2 });
      expect(await client.getPricing(siteId)).toEqual(
        pricingView(siteId, '0.002', [
          ['/blog/*', '0.01'],
          ['/free/*', '0'],
        ]),
      );
      expect(await client.getSite(siteId)).toMatchObject({ default_price_usd: '0.002', rules_count: 2 });
    });

    it('resolvePrice names the winning rule, or the default', async () => {
      expect(await client.resolvePrice(siteId, '/blog/post-1?ref=feed&x=1')).toEqual({
        path: '/blog/post-1',
        price_usd: '0.01',
        rule: 0,
        pattern: '/blog/*',
      });
      expect(await client.resolvePrice(siteId, '/free/a b')).toMatchObject({ price_usd: '0', rule: 1 });
      expect(await client.resolvePrice(siteId, '/other')).toEqual({
        path: '/other',
        price_usd: '0.002',
        rule: null,
        pattern: null,
      });
    });

    it('a bad price or pattern is a 422 whose items locate each problem', async () => {
      const error = await failure(
        client.setPricing(siteId, {
          default_price_usd: '0.5',
          rules: [
            { path: '/ok/*', price_usd: '2' },
            { path: '/bad/**', price_usd: '0.1' },
          ],
        }),
      );
      expect(error.status).toBe(422);
      expect(error.items).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ loc: ['body', 'rules', 0, 'price_usd'], type: 'price_range', input: '2' }),
          expect.objectContaining({ loc: ['body', 'rules', 1, 'path'] }),
        ]),
      );
      // Nothing was replaced.
      expect((await client.getPricing(siteId)).rules).toHaveLength(2);
    });
  });

  describe('bot policy', () => {
    let siteId: string;
    beforeAll(async () => {
      siteId = (await client.createSite({ domain: newDomain() })).site_id;
    });

    it('getBotPolicy of a new site: nothing set, the defaults to show', async () => {
      const policy = await client.getBotPolicy(siteId);
      expect(policy).toMatchObject({
        site_id: siteId,
        categories: {},
        bots: {},
        require_signature: { categories: [], bots: [] },
        version: 0,
      });
      expect(policy.defaults).toMatchObject({ 'ai-training': 'charge', 'search-engine': 'allow' });
    });

    it('setBotAction and removeBotAction change one crawler and answer the whole policy', async () => {
      await client.setBotPolicy(siteId, { categories: { seo: 'block' } });
      const blocked = await client.setBotAction(siteId, 'gptbot', 'block');
      expect(blocked).toMatchObject({ categories: { seo: 'block' }, bots: { GPTBot: 'block' } });
      // A name that needs escaping in a path (a space, a "!") reaches the API whole.
      expect((await client.setBotAction(siteId, 'Yahoo! Slurp', 'allow')).bots).toEqual({
        GPTBot: 'block',
        'Yahoo! Slurp': 'allow',
      });
      expect((await client.removeBotAction(siteId, 'GPTBot')).bots).toEqual({ 'Yahoo! Slurp': 'allow' });
      expect((await client.getBotPolicy(siteId)).bots).toEqual({ 'Yahoo! Slurp': 'allow' });

      const error = await failure(client.setBotAction(siteId, 'GPTBot', 'maybe' as never));
      expect(error.status).toBe(422);
      expect((await failure(client.setBotAction(siteId, '../../pricing', 'block'))).status).toBe(422);
    });
  });

  describe('reporting', () => {
    let siteId: string;
    beforeAll(async () => {
      siteId = (await client.createSite({ domain: newDomain() })).site_id;
    });

    it('siteStats of a new site: zeros over the last 30 UTC days', async () => {
      const stats = await client.siteStats(siteId);
      expect(stats).toMatchObject({
        site_id: siteId,
        revenue_usd: '0',
        revenue_amount: '0',
        paid_gates: 0,
        gates_created: 0,
        conversion: '0',
        unique_agents: 0,
        top_paths: [],
        top_agents: [],
      });
      expect(stats.by_day).toHaveLength(30);
      expect(stats.to).toBe(new Date().toISOString().slice(0, 10));
    });

    it('stats: every site of the publisher over the range', async () => {
      const stats = await client.stats({ from: '2026-01-01', to: new Date('2026-01-02T12:00:00Z') });
      expect(stats).toMatchObject({ from: '2026-01-01', to: '2026-01-02', revenue_amount: '0', top_paths: [] });
      expect(stats).not.toHaveProperty('site_id');
      expect(stats.by_day.map((d) => d.day)).toEqual(['2026-01-01', '2026-01-02']);
      expect((await failure(client.stats({ to: '2026-13-01' }))).status).toBe(422);
    });

    it('siteStats takes from/to as strings or Dates', async () => {
      const stats = await client.siteStats(siteId, { from: '2026-01-01', to: new Date('2026-01-03T12:00:00Z') });
      expect(stats).toMatchObject({ from: '2026-01-01', to: '2026-01-03' });
      expect(stats.by_day.map((d) => d.day)).toEqual(['2026-01-01', '2026-01-02', '2026-01-03']);
      const error = await failure(client.siteStats(siteId, { from: '2026-02-30' }));
      expect(error.status).toBe(422);
      expect(error.items?.[0]).toMatchObject({ loc: ['query', 'from'], type: 'date_format' });
    });

    it('siteCrawlers and siteCrawlersCsv read what the middleware reported, as JSON and as CSV text', async () => {
      const site = await client.createSite({ domain: newDomain() });
      const today = new Date().toISOString().slice(0, 10);
      const reported = await app.call('POST', '/v1/site/gate-counts', {
        headers: { 'x-site-token': site.site_token },
        body: {
          counts: [],
          crawlers: [
            {
              day: today,
              crawler: 'GPTBot',
              category: 'ai-training',
              operator: 'OpenAI',
              action: 'paid',
              verified: false,
              requests: 3,
              revenue_micros: '15000',
            },
          ],
          paths: [{ day: today, crawler: 'GPTBot', path: '/a', requests: 3 }],
        },
      });
      expect(reported.status).toBe(204);

      const view = await client.siteCrawlers(site.site_id, { from: today, to: new Date() });
      expect(view).toMatchObject({
        site_id: site.site_id,
        from: today,
        to: today,
        days: [{ day: today, paid: 3, charged: 0 }],
      });
      expect(view.crawlers).toEqual([
        expect.objectContaining({
          crawler: 'GPTBot',
          operator: 'OpenAI',
          requests: 3,
          paid: 3,
          // Reported, and backed by no confirmed payment: none of it shows.
          revenue_usd: '0',
          verified_share: '0.0000',
          top_paths: [{ path: '/a', requests: 3, verified: false }],
        }),
      ]);

      const csv = await client.siteCrawlersCsv(site.site_id, { from: today });
      expect(csv).toBe(
        'crawler,category,operator,requests,passed,allowed,blocked,charged,paid,token,revenue_usd,verified_share\r\nGPTBot,ai-training,OpenAI,3,0,0,0,0,3,0,0,0.0000\r\n',
      );
      // A refusal is still read as the API's JSON detail.
      const error = await failure(client.siteCrawlersCsv(site.site_id, { from: '2026-02-30' }));
      expect(error.status).toBe(422);
      expect(error.items?.[0]).toMatchObject({ loc: ['query', 'from'] });
    });

    it('sitePayments of a new site is one empty page', async () => {
      expect(await client.sitePayments(siteId)).toEqual({ items: [], next_cursor: null });
      const all = [];
      for await (const payment of client.iterateSitePayments(siteId)) all.push(payment);
      expect(all).toEqual([]);
    });

    it('iterateSitePayments follows next_cursor through every page, newest first', async () => {
      const owner = { publisherId: (await client.me()).publisher_id } as Parameters<typeof insertPayment>[1];
      const site = { siteId } as Parameters<typeof insertPayment>[2];
      const inserted = [];
      for (let i = 0; i < 5; i++) {
        inserted.push(
          await insertPayment(app, owner, site, {
            payer: newAddress(),
            amount: 1000n,
            url: `/p/${i}`,
            confirmedAt: new Date(Date.UTC(2026, 0, 1, 0, i)),
          }),
        );
      }
      const first = await client.sitePayments(siteId, { limit: 2 });
      expect(first.items).toHaveLength(2);
      expect(first.next_cursor).toEqual(expect.any(String));
      expect(first.items[0]).toEqual({
        payment_id: inserted[4].id,
        gate_id: inserted[4].gateId,
        site_id: siteId,
        url: '/p/4',
        amount: '1000',
        price_usd: '0.001',
        tx_hash: inserted[4].txHash,
        scheme: 'exact',
        channel_id: null,
        network: expect.any(String),
        paid_at: '2026-01-01T00:04:00.000Z',
        payer: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
      });

      const urls = [];
      for await (const payment of client.iterateSitePayments(siteId, { limit: 2 })) urls.push(payment.url);
      expect(urls).toEqual(['/p/4', '/p/3', '/p/2', '/p/1', '/p/0']);

      const bad = await failure(client.sitePayments(siteId, { limit: 0 }));
      expect(bad.items?.[0]).toMatchObject({ loc: ['query', 'limit'] });
    });
  });

  it('accepts an apiUrl with a trailing /v1 or slash', async () => {
    const key = (await client.rotateApiKey()).api_key;
    for (const apiUrl of [`${app.baseUrl}/`, `${app.baseUrl}/v1`, `${app.baseUrl}/v1/`]) {
      expect((await new PublisherClient({ apiUrl, apiKey: key }).me()).email).toBe(email);
    }
    expect(() => new PublisherClient({ apiUrl: 'api.example.com' })).toThrow(TypeError);
    expect(() => new PublisherClient({ apiUrl: 'ftp://api.example.com' })).toThrow(/http/);
  });
});
