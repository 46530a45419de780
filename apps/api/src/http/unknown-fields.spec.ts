import { createSite, registerPublisher, type TestPublisher, type TestSite } from '../../test/fixtures';
import { startTestApp, type TestApp } from '../../test/test-app';

/*
 * A publisher's settings are replaced whole from a body: a field misspelt there ("rule" for
 * "rules") was dropped without a word, and the setting it meant was wiped (every rule gone, the
 * bot policy reset). Those bodies refuse a field they do not declare; the middleware's own calls
 * (reports, gates, verifications) still ignore one, so a newer middleware works with an older API.
 */
describe('fields a settings body does not declare', () => {
  let app: TestApp;
  let publisher: TestPublisher;
  let site: TestSite;
  beforeAll(async () => {
    app = await startTestApp();
    publisher = await registerPublisher(app);
    site = await createSite(app, publisher);
  });
  afterAll(() => app.close());

  const call = (method: string, path: string, body: unknown) =>
    app.call(method, path, { body, headers: publisher.auth });
  const extra = (loc: (string | number)[]) => expect.objectContaining({ loc, type: 'extra_forbidden' });

  it('refuses a misspelt pricing field, in the body or in a rule, and keeps the stored pricing', async () => {
    const pricing = `/v1/sites/${site.siteId}/pricing`;
    const good = { default_price_usd: '0.01', rules: [{ path: '/premium/*', price_usd: '0.05' }] };
    expect((await call('PUT', pricing, good)).status).toBe(200);
    const before = (await call('GET', pricing, undefined)).body;

    const misspelt = await call('PUT', pricing, { default_price_usd: '0', rule: [{ path: '/*', price_usd: '0' }] });
    expect(misspelt.status).toBe(422);
    expect(misspelt.body.detail).toEqual([extra(['body', 'rule'])]);
    const inRule = await call('PUT', pricing, { default_price_usd: '0.01', rules: [{ path: '/a', price: '0.5' }] });
    expect(inRule.status).toBe(422);
    expect(inRule.body.detail).toEqual(expect.arrayContaining([extra(['body', 'rules', 0, 'price'])]));
    expect((await call('GET', pricing, undefined)).body).toEqual(before);

    // What GET answers can be sent back as it is: its own read-only fields are taken and ignored.
    expect((await call('PUT', pricing, before)).status).toBe(200);
  });

  it('refuses a misspelt bot policy field and keeps the stored policy; GET’s answer goes back as it is', async () => {
    const policy = `/v1/sites/${site.siteId}/bot-policy`;
    expect((await call('PUT', policy, { bots: { GPTBot: 'block' }, categories: { seo: 'block' } })).status).toBe(200);
    const before = (await call('GET', policy, undefined)).body;
    const misspelt = await call('PUT', policy, { bot: { GPTBot: 'allow' } });
    expect(misspelt.status).toBe(422);
    expect(misspelt.body.detail).toEqual([extra(['body', 'bot'])]);
    // Inside require_signature too: a misspelt list there left ai-search crawlers free on their User-Agent alone.
    const signature = await call('PUT', policy, {
      categories: { 'ai-search': 'allow' },
      require_signature: { categorie: ['ai-search'] },
    });
    expect(signature.status).toBe(422);
    expect(signature.body.detail).toEqual([extra(['body', 'require_signature', 'categorie'])]);
    const action = await call('PUT', `${policy}/bots/GPTBot`, { action: 'allow', actoin: 'allow' });
    expect(action.body.detail).toEqual([extra(['body', 'actoin'])]);
    expect((await call('GET', policy, undefined)).body).toEqual(before);
    const sentBack = await call('PUT', policy, before);
    expect(sentBack.status).toBe(200);
    expect(sentBack.body).toMatchObject({ bots: { GPTBot: 'block' }, categories: { seo: 'block' } });
  });

  it('refuses a misspelt field when a site is created, changed or its secret rotated', async () => {
    const created = await call('POST', '/v1/sites', { domain: 'typo.example.com', nmae: 'Typo' });
    expect(created.body.detail).toEqual([extra(['body', 'nmae'])]);
    const changed = await call('PATCH', `/v1/sites/${site.siteId}`, { batch_setlement: true });
    expect(changed.body.detail).toEqual([extra(['body', 'batch_setlement'])]);
    // A leaked secret revoked with a misspelt grace would have kept verifying for the default hour.
    const rotated = await call('POST', `/v1/sites/${site.siteId}/secret/rotate`, { grace_second: 0 });
    expect(rotated.status).toBe(422);
    expect(rotated.body.detail).toEqual([extra(['body', 'grace_second'])]);
  });

  it('refuses a misspelt account field; an empty change answers the account as it is', async () => {
    const misspelt = await call('PATCH', '/v1/publishers/me', { payout_adress: '0x' + '1'.repeat(40) });
    expect(misspelt.body.detail).toEqual([extra(['body', 'payout_adress'])]);
    // What a field nobody declared holds is never shown: it may be a misspelt password.
    const secret = await call('PATCH', '/v1/publishers/me', { pasword: 'hunter2-hunter2' });
    expect(secret.body.detail).toEqual([extra(['body', 'pasword'])]);
    expect(JSON.stringify(secret.body)).not.toContain('hunter2');
    // Nor a body that is no object: named by its kind.
    const listed = await app.call('POST', '/v1/publishers/login', {
      body: [{ email: 'a@example.com', password: 'hunter2-hunter2' }],
    });
    expect(listed.status).toBe(422);
    expect(listed.body.detail).toEqual([expect.objectContaining({ loc: ['body'], type: 'dict_type', input: 'array' })]);
    expect(JSON.stringify(listed.body)).not.toContain('hunter2');
    // Nor a payment that is not one: a signed authorization is not echoed.
    const payment = await app.call('POST', '/v1/gates/gate_x/verify', {
      body: { payment: [{ x402Version: 1, payload: { signature: '0xSIGNEDSECRET' } }] },
    });
    expect(payment.status).toBe(422);
    expect(JSON.stringify(payment.body)).not.toContain('SIGNEDSECRET');
    const unchanged = await call('PATCH', '/v1/publishers/me', {});
    expect(unchanged.status).toBe(200);
    expect(unchanged.body).toEqual((await call('GET', '/v1/publishers/me', undefined)).body);
  });

  it('refuses a field named as a member every object inherits ("constructor", "hasOwnProperty"), at any depth, and keeps what is stored', async () => {
    // class-validator's whitelist looks names up in a plain object, where these are found: each was
    // taken as declared (and, inside the bot policy's maps, dropped: the whole policy then replaced by an empty one).
    const policy = `/v1/sites/${site.siteId}/bot-policy`;
    expect((await call('PUT', policy, { bots: { GPTBot: 'block' } })).status).toBe(200);
    const before = (await call('GET', policy, undefined)).body;
    for (const [body, loc] of [
      [{ bots: { constructor: 'allow' } }, ['body', 'bots', 'constructor']],
      [{ categories: { hasOwnProperty: 'allow' } }, ['body', 'categories', 'hasOwnProperty']],
      [{ require_signature: { constructor: ['x'] } }, ['body', 'require_signature', 'constructor']],
    ] as const) {
      const answer = await call('PUT', policy, body);
      expect({ status: answer.status, detail: answer.body.detail }).toEqual({ status: 422, detail: [extra([...loc])] });
    }
    expect((await call('GET', policy, undefined)).body).toEqual(before);
    const pricing = `/v1/sites/${site.siteId}/pricing`;
    for (const [method, path, body, loc] of [
      ['PATCH', '/v1/publishers/me', { constructor: 'x', name: 'n' }, ['body', 'constructor']],
      ['PUT', pricing, { default_price_usd: '0.01', constructor: 'x' }, ['body', 'constructor']],
      [
        'PUT',
        pricing,
        { default_price_usd: '0.01', rules: [{ path: '/a', price_usd: '0.5', valueOf: 1 }] },
        ['body', 'rules', 0, 'valueOf'],
      ],
      ['PATCH', `/v1/sites/${site.siteId}`, { __defineGetter__: 1 }, ['body', '__defineGetter__']],
      ['PATCH', `/v1/sites/${site.siteId}`, { __lookupGetter__: 1 }, ['body', '__lookupGetter__']],
      ['PATCH', `/v1/sites/${site.siteId}`, { hasOwnProperty: 1 }, ['body', 'hasOwnProperty']],
    ] as const) {
      const answer = await call(method, path, body);
      expect({ path, status: answer.status, detail: answer.body.detail }).toEqual({
        path,
        status: 422,
        detail: [extra([...loc])],
      });
    }
  });

  it('still ignores a field the middleware’s calls do not know (a newer middleware, an older API)', async () => {
    const day = new Date().toISOString().slice(0, 10);
    const report = await app.call('POST', '/v1/site/gate-counts', {
      body: { counts: [{ day, gates: 1, from_the_future: true }], from_the_future: 1 },
      headers: { 'x-site-token': site.siteToken },
    });
    expect(report.status).toBe(204);
  });
});
