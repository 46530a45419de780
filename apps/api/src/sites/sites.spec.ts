import { sha256Hex } from '@crawlgate/core';
import { createSite, registerPublisher, type TestPublisher } from '../../test/fixtures';
import { startTestApp, type TestApp } from '../../test/test-app';

describe('sites API', () => {
  let app: TestApp;
  let owner: TestPublisher;
  let stranger: TestPublisher;
  beforeAll(async () => {
    app = await startTestApp({ config: { secretGraceSeconds: 600 } });
    owner = await registerPublisher(app);
    stranger = await registerPublisher(app);
  });
  afterAll(() => app.close());

  it('creates a site with a site token and an access-token secret shown once', async () => {
    const response = await app.call('POST', '/v1/sites', { body: { domain: 'Blog.Example.COM.', name: 'Blog' }, headers: owner.auth });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ domain: 'blog.example.com', name: 'Blog', default_price_usd: '0', rules_count: 0 });
    expect(response.body.site_token).toMatch(/^st_[A-Za-z0-9_-]{43}$/);
    expect(response.body.access_token_secret).toMatch(/^cgsec_/);
    expect(response.body.kid).toEqual(expect.any(String));

    const fetched = await app.call('GET', `/v1/sites/${response.body.site_id}`, { headers: owner.auth });
    expect(fetched.status).toBe(200);
    expect(fetched.body).not.toHaveProperty('site_token');
    expect(fetched.body).not.toHaveProperty('access_token_secret');
  });

  it('answers 409 for a domain the publisher already has, but lets another publisher use it', async () => {
    await createSite(app, owner, 'dup.example.com');
    const again = await app.call('POST', '/v1/sites', { body: { domain: 'DUP.example.com' }, headers: owner.auth });
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/already have a site/);
    expect((await app.call('POST', '/v1/sites', { body: { domain: 'dup.example.com' }, headers: stranger.auth })).status).toBe(201);
  });

  it.each([['https://example.com'], ['example.com/path'], ['exa mple.com'], [''], [42]])('answers 422 for the domain %p', async (domain) => {
    const response = await app.call('POST', '/v1/sites', { body: { domain }, headers: owner.auth });
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['body', 'domain']);
  });

  it('lists only the publisher’s own sites', async () => {
    const publisher = await registerPublisher(app);
    const a = await createSite(app, publisher);
    const b = await createSite(app, publisher);
    const list = await app.call('GET', '/v1/sites', { headers: publisher.auth });
    expect(list.status).toBe(200);
    expect(list.body.items.map((site: { site_id: string }) => site.site_id)).toEqual([a.siteId, b.siteId]);
  });

  it('updates name and domain, with 409 on a taken domain', async () => {
    const site = await createSite(app, owner);
    const renamed = await app.call('PATCH', `/v1/sites/${site.siteId}`, { body: { name: 'Renamed', domain: 'renamed.example.com' }, headers: owner.auth });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Renamed', domain: 'renamed.example.com' });
    const other = await createSite(app, owner);
    const clash = await app.call('PATCH', `/v1/sites/${other.siteId}`, { body: { domain: 'renamed.example.com' }, headers: owner.auth });
    expect(clash.status).toBe(409);
  });

  it('deletes a site; afterwards it is 404 and its token is dead', async () => {
    const site = await createSite(app, owner);
    const deleted = await app.call('DELETE', `/v1/sites/${site.siteId}`, { headers: owner.auth });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ site_id: site.siteId, deleted: true });
    expect((await app.call('GET', `/v1/sites/${site.siteId}`, { headers: owner.auth })).status).toBe(404);
    expect(await app.database.prisma.siteSecret.count({ where: { siteId: site.siteId } })).toBe(0);
  });

  describe('another publisher’s site is 404 on every route, never 403', () => {
    let site: Awaited<ReturnType<typeof createSite>>;
    beforeAll(async () => {
      site = await createSite(app, owner);
    });
    it.each([
      ['GET', ''],
      ['PATCH', ''],
      ['DELETE', ''],
      ['POST', '/site-token/rotate'],
      ['POST', '/secret/rotate'],
      ['GET', '/pricing'],
      ['PUT', '/pricing'],
      ['GET', '/pricing/resolve?path=/a'],
    ])('%s /v1/sites/{id}%s', async (method, suffix) => {
      const body = method === 'PATCH' ? { name: 'x' } : method === 'PUT' ? { default_price_usd: '0.01' } : undefined;
      const response = await app.call(method, `/v1/sites/${site.siteId}${suffix}`, { body, headers: stranger.auth });
      expect(response.status).toBe(404);
      expect(response.body.detail).toBe('Site not found');
    });
    it('and the site is untouched', async () => {
      const fetched = await app.call('GET', `/v1/sites/${site.siteId}`, { headers: owner.auth });
      expect(fetched.status).toBe(200);
    });
  });

  it.each([['not-a-uuid'], ['00000000-0000-0000-0000-000000000000']])('answers 404 for the site id %s', async (id) => {
    expect((await app.call('GET', `/v1/sites/${id}`, { headers: owner.auth })).status).toBe(404);
  });

  it('answers 401 without a publisher key', async () => {
    expect((await app.call('GET', '/v1/sites')).status).toBe(401);
    expect((await app.call('POST', '/v1/sites', { body: { domain: 'x.example.com' } })).status).toBe(401);
  });

  it('rotates the site token: only the new hash is stored', async () => {
    const site = await createSite(app, owner);
    const rotated = await app.call('POST', `/v1/sites/${site.siteId}/site-token/rotate`, { headers: owner.auth });
    expect(rotated.status).toBe(200);
    expect(rotated.body.site_token).toMatch(/^st_/);
    const row = await app.database.prisma.site.findUniqueOrThrow({ where: { id: site.siteId } });
    expect(row.siteTokenHash).toBe(sha256Hex(rotated.body.site_token));
    expect(row.siteTokenHash).not.toBe(sha256Hex(site.siteToken));
  });

  it('rotates the secret with a grace period for the old kid', async () => {
    const site = await createSite(app, owner);
    const rotated = await app.call('POST', `/v1/sites/${site.siteId}/secret/rotate`, { headers: owner.auth });
    expect(rotated.status).toBe(200);
    expect(rotated.body.access_token_secret).toMatch(/^cgsec_/);
    expect(rotated.body.access_token_secret).not.toBe(site.secret);
    expect(rotated.body.kid).not.toBe(site.kid);
    expect(rotated.body.previous_kids).toEqual([site.kid]);
    const graceEnds = Date.parse(rotated.body.previous_valid_until) - Date.now();
    expect(graceEnds).toBeGreaterThan(590_000);
    expect(graceEnds).toBeLessThanOrEqual(600_000);
  });

  it('stores no plaintext site token or secret in any table', async () => {
    const site = await createSite(app, owner);
    const rotated = await app.call('POST', `/v1/sites/${site.siteId}/secret/rotate`, { headers: owner.auth });
    const dump = JSON.stringify(
      await Promise.all(['publishers', 'sites', 'price_rules', 'site_secrets'].map((table) => app.database.sql.query(`SELECT * FROM ${table}`))),
      (_, value) => (typeof value === 'bigint' ? value.toString() : value instanceof Uint8Array ? Buffer.from(value).toString('latin1') : value),
    );
    for (const secret of [site.siteToken, site.secret, rotated.body.access_token_secret, owner.apiKey]) {
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(secret.slice(-20));
    }
  });
});
