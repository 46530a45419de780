import { createSite, freshIp, registerPublisher, type TestPublisher } from '../../test/fixtures';
import { startTestApp, type CallResult, type TestApp } from '../../test/test-app';

/*
 * An answer that carries a key, token or secret must never be kept by a cache on the way (or the
 * browser's); and no answer may be sniffed into another content type.
 */
describe('response headers', () => {
  let app: TestApp;
  let publisher: TestPublisher;
  beforeAll(async () => {
    app = await startTestApp();
    publisher = await registerPublisher(app);
  });
  afterAll(() => app.close());

  const secretAnswers: [string, () => Promise<CallResult>][] = [
    [
      'POST /v1/publishers/register',
      () =>
        app.call('POST', '/v1/publishers/register', {
          body: { email: `h-${freshIp()}@example.com`, password: 'long enough pw' },
          headers: { 'x-forwarded-for': freshIp() },
        }),
    ],
    [
      'POST /v1/publishers/login',
      () =>
        app.call('POST', '/v1/publishers/login', {
          body: { email: publisher.email, password: publisher.password },
          headers: { 'x-forwarded-for': freshIp() },
        }),
    ],
    ['GET /v1/publishers/me', () => app.call('GET', '/v1/publishers/me', { headers: publisher.auth })],
    [
      'PATCH /v1/publishers/me',
      () => app.call('PATCH', '/v1/publishers/me', { body: { name: 'Renamed' }, headers: publisher.auth }),
    ],
    [
      'POST /v1/publishers/me/api-key/rotate',
      () => app.call('POST', '/v1/publishers/me/api-key/rotate', { headers: publisher.auth }),
    ],
    [
      'POST /v1/sites',
      () =>
        app.call('POST', '/v1/sites', {
          body: { domain: `${freshIp().replace(/\./g, '-')}.example.com` },
          headers: publisher.auth,
        }),
    ],
    [
      'POST /v1/sites/{id}/site-token/rotate',
      async () =>
        app.call('POST', `/v1/sites/${(await createSite(app, publisher)).siteId}/site-token/rotate`, {
          headers: publisher.auth,
        }),
    ],
    [
      'POST /v1/sites/{id}/secret/rotate',
      async () =>
        app.call('POST', `/v1/sites/${(await createSite(app, publisher)).siteId}/secret/rotate`, {
          headers: publisher.auth,
        }),
    ],
  ];

  it.each(secretAnswers)('%s answers with Cache-Control: no-store', async (_, call) => {
    const response = await call();
    expect(response.status).toBeLessThan(300);
    expect(response.headers.get('cache-control')).toBe('no-store');
    // Login and key rotation replace the key the other calls use.
    if (response.body.api_key)
      publisher = {
        ...publisher,
        apiKey: response.body.api_key,
        auth: { authorization: `Bearer ${response.body.api_key}` },
      };
  });

  it('keeps every answer to a credential out of caches: the account’s own sites, revenue, payers and crawlers', async () => {
    const site = await createSite(app, publisher);
    const owned = [
      '/v1/sites',
      `/v1/sites/${site.siteId}`,
      `/v1/sites/${site.siteId}/pricing`,
      `/v1/sites/${site.siteId}/pricing/resolve?path=/a`,
      `/v1/sites/${site.siteId}/stats`,
      `/v1/sites/${site.siteId}/payments`,
      `/v1/sites/${site.siteId}/channels`,
      `/v1/sites/${site.siteId}/crawlers`,
      `/v1/sites/${site.siteId}/crawlers.csv`,
      `/v1/sites/${site.siteId}/bot-policy`,
    ];
    const answers = [
      ...(await Promise.all(owned.map((path) => app.call('GET', path, { headers: publisher.auth })))),
      await app.call('GET', '/v1/site', { headers: { 'x-site-token': site.siteToken } }),
      await app.call('GET', '/v1/agents/me', {
        headers: { 'x-wallet-address': '0x00000000000000000000000000000000000000a1' },
      }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    expect(answers.map((answer) => answer.headers.get('cache-control'))).toEqual(answers.map(() => 'no-store'));
  });

  it.each([
    ['a success', () => app.call('GET', '/v1/sites', { headers: publisher.auth }), 200],
    ['a 401', () => app.call('GET', '/v1/sites'), 401],
    ['a 404', () => app.call('GET', '/v1/nothing-here'), 404],
    ['a 422', () => app.call('POST', '/v1/sites', { body: {}, headers: publisher.auth }), 422],
    [
      'a 400 for a body that is not JSON',
      () => app.call('POST', '/v1/sites', { body: '{', rawBody: true, headers: publisher.auth }),
      400,
    ],
    ['a 400 for a path that does not decode', () => app.call('GET', '/v1/sites/%ff'), 400],
    ['the OpenAPI document', () => app.call('GET', '/v1/openapi.json'), 200],
    ['the health check', () => app.call('GET', '/v1/health'), 200],
  ] as [string, () => Promise<CallResult>, number][])(
    '%s carries X-Content-Type-Options: nosniff',
    async (_, call, status) => {
      const response = await call();
      expect(response.status).toBe(status);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    },
  );
});
