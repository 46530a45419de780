import { startTestApp, type TestApp } from '../../test/test-app';

describe('OpenAPI document and docs page', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('serves OpenAPI 3.1 at /v1/openapi.json with version 0.1.0 and every endpoint', async () => {
    const response = await app.call('GET', '/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    expect(response.body.info.version).toBe('0.1.0');
    const operations = Object.entries(response.body.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        'POST /v1/publishers/register',
        'POST /v1/publishers/login',
        'GET /v1/publishers/me',
        'PATCH /v1/publishers/me',
        'POST /v1/publishers/me/api-key/rotate',
        'POST /v1/sites',
        'GET /v1/sites',
        'GET /v1/sites/{site_id}',
        'PATCH /v1/sites/{site_id}',
        'DELETE /v1/sites/{site_id}',
        'POST /v1/sites/{site_id}/site-token/rotate',
        'POST /v1/sites/{site_id}/secret/rotate',
        'PUT /v1/sites/{site_id}/pricing',
        'GET /v1/sites/{site_id}/pricing',
        'GET /v1/health',
        'POST /v1/gates',
        'GET /v1/gates/{id}',
        'POST /v1/gates/{id}/verify',
        'POST /v1/access-tokens/verify',
        'POST /v1/access-tokens/siwx',
        'GET /v1/agents/me',
        'GET /v1/agents/me/payments',
        'GET /v1/sites/{site_id}/stats',
        'GET /v1/sites/{site_id}/payments',
        'POST /v1/dev/faucet',
      ]),
    );
    const pricingBody = response.body.components.schemas.PricingDto;
    expect(pricingBody.required).toContain('default_price_usd');
    expect(response.body.components.schemas.SiwxAccessDto.required).toEqual(['proof', 'url']);
    expect(Object.keys(response.body.paths['/v1/access-tokens/siwx'].post.responses)).toEqual(
      expect.arrayContaining(['200', '400', '401', '402', '409', '422', '503']),
    );
  });

  it('serves a docs page at /docs', async () => {
    const response = await fetch(`${app.baseUrl}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
    expect(await response.text()).toMatch(/Crawlgate API docs/);
  });

  it.each(['/docs', '/docs/', '/%64ocs', '/%64ocs/', '/docs/%73wagger-ui-init.js', '/%64ocs/swagger-ui-init.js'])(
    'serves the docs page and its files at %s under the page policy: never framed, no script from elsewhere',
    async (path) => {
      // The headers followed the raw URL while Fastify routes the decoded one: /%64ocs was the docs
      // page with no policy, framable by any site, on the origin whose dashboard holds the key.
      const response = await fetch(`${app.baseUrl}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    },
  );
});
