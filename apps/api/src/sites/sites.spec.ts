import { MAX_ACCESS_TOKEN_TTL_SECONDS, sha256Hex, signAccessToken } from '@crawlgate/core';
import { randomUUID } from 'node:crypto';
import { createSite, registerPublisher, type TestPublisher, type TestSite } from '../../test/fixtures';
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
    const response = await app.call('POST', '/v1/sites', {
      body: { domain: 'Blog.Example.COM.', name: 'Blog' },
      headers: owner.auth,
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      domain: 'blog.example.com',
      name: 'Blog',
      default_price_usd: '0',
      rules_count: 0,
    });
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
    expect(
      (await app.call('POST', '/v1/sites', { body: { domain: 'dup.example.com' }, headers: stranger.auth })).status,
    ).toBe(201);
  });

  it.each([['https://example.com'], ['example.com/path'], ['exa mple.com'], [''], [42]])(
    'answers 422 for the domain %p',
    async (domain) => {
      const response = await app.call('POST', '/v1/sites', { body: { domain }, headers: owner.auth });
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['body', 'domain']);
    },
  );

  it.each([
    ['example.com:99999'],
    ['example.com:65536'],
    ['example.com:0'],
    ['example.com:080'],
    ['example.com:'],
    ['example.com:-1'],
    ['example.com:8080:1'],
    ['example.com:80a'],
  ])('answers 422 for the domain %p: a port must be 1 to 65535', async (domain) => {
    const created = await app.call('POST', '/v1/sites', { body: { domain }, headers: owner.auth });
    expect(created.status).toBe(422);
    expect(created.body.detail[0]).toMatchObject({ loc: ['body', 'domain'], msg: expect.stringMatching(/1 to 65535/) });
    const site = await createSite(app, owner);
    expect(
      (await app.call('PATCH', `/v1/sites/${site.siteId}`, { body: { domain }, headers: owner.auth })).status,
    ).toBe(422);
  });

  it.each([['ports.example.com:1'], ['ports.example.com:8080'], ['ports.example.com:65535'], ['localhost:3000']])(
    'accepts the domain %p with its port',
    async (domain) => {
      const response = await app.call('POST', '/v1/sites', { body: { domain }, headers: owner.auth });
      expect(response.status).toBe(201);
      expect(response.body.domain).toBe(domain);
    },
  );

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
    const renamed = await app.call('PATCH', `/v1/sites/${site.siteId}`, {
      body: { name: 'Renamed', domain: 'renamed.example.com' },
      headers: owner.auth,
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: 'Renamed', domain: 'renamed.example.com' });
    const other = await createSite(app, owner);
    const clash = await app.call('PATCH', `/v1/sites/${other.siteId}`, {
      body: { domain: 'renamed.example.com' },
      headers: owner.auth,
    });
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

  describe('access-token secret rotation', () => {
    /** A token for the site signed with `secret` under `kid`, as the API would issue it. */
    const tokenSignedBy = (site: TestSite, kid: string, secret: string) => {
      const iat = Math.floor(Date.now() / 1000);
      return signAccessToken(
        { gate_id: randomUUID(), site_id: site.siteId, url: '/paid', kid, iat, exp: iat + 600 },
        secret,
      );
    };
    const isValid = async (site: TestSite, token: string) =>
      (
        await app.call('POST', '/v1/access-tokens/verify', {
          body: { token },
          headers: { 'x-site-token': site.siteToken },
        })
      ).body.valid;
    const rotate = (site: TestSite, body?: unknown) =>
      app.call('POST', `/v1/sites/${site.siteId}/secret/rotate`, { body, headers: owner.auth });

    it('revokes the previous secret at once with grace_seconds 0: its tokens are invalid straight away', async () => {
      const site = await createSite(app, owner);
      const leaked = tokenSignedBy(site, site.kid, site.secret);
      expect(await isValid(site, leaked)).toBe(true);
      const rotated = await rotate(site, { grace_seconds: 0 });
      expect(rotated.status).toBe(200);
      expect(rotated.body).toMatchObject({ previous_kids: [], previous_valid_until: null });
      expect(await isValid(site, leaked)).toBe(false);
      expect(await isValid(site, tokenSignedBy(site, rotated.body.kid, rotated.body.access_token_secret))).toBe(true);
    });

    it('keeps the previous secret for grace_seconds when given', async () => {
      const site = await createSite(app, owner);
      const rotated = await rotate(site, { grace_seconds: 30 });
      expect(rotated.body.previous_kids).toEqual([site.kid]);
      const graceEnds = Date.parse(rotated.body.previous_valid_until) - Date.now();
      expect(graceEnds).toBeGreaterThan(25_000);
      expect(graceEnds).toBeLessThanOrEqual(30_000);
      expect(await isValid(site, tokenSignedBy(site, site.kid, site.secret))).toBe(true);
    });

    it('ends the first grace at a second rotation: only the newest previous secret still verifies', async () => {
      const site = await createSite(app, owner);
      const first = await rotate(site);
      const second = await rotate(site);
      expect(second.status).toBe(200);
      expect(second.body.previous_kids).toEqual([first.body.kid]);
      expect(await isValid(site, tokenSignedBy(site, site.kid, site.secret))).toBe(false);
      expect(await isValid(site, tokenSignedBy(site, first.body.kid, first.body.access_token_secret))).toBe(true);
      expect(await isValid(site, tokenSignedBy(site, second.body.kid, second.body.access_token_secret))).toBe(true);
    });

    it('takes each secret for the tokens naming its own kid only, none issued ahead of its clock nor living too long', async () => {
      const site = await createSite(app, owner);
      const rotated = await rotate(site);
      const verify = async (token: string) =>
        (
          await app.call('POST', '/v1/access-tokens/verify', {
            body: { token },
            headers: { 'x-site-token': site.siteToken },
          })
        ).body;
      // Both secrets verify (the previous one in its grace), each under its own kid only.
      expect(await isValid(site, tokenSignedBy(site, site.kid, site.secret))).toBe(true);
      expect(await verify(tokenSignedBy(site, rotated.body.kid, site.secret))).toEqual({
        valid: false,
        reason: 'bad_signature',
      });
      expect(await verify(tokenSignedBy(site, site.kid, rotated.body.access_token_secret))).toEqual({
        valid: false,
        reason: 'bad_signature',
      });
      const now = Math.floor(Date.now() / 1000);
      const signed = (iat: number, exp: number) =>
        signAccessToken(
          { gate_id: randomUUID(), site_id: site.siteId, url: '/paid', kid: rotated.body.kid, iat, exp },
          rotated.body.access_token_secret,
        );
      expect(await verify(signed(now + 3600, now + 4200))).toEqual({ valid: false, reason: 'not_yet_valid' });
      expect(await verify(signed(now - 60, now + MAX_ACCESS_TOKEN_TTL_SECONDS))).toEqual({
        valid: false,
        reason: 'malformed',
      });
      expect(await isValid(site, signed(now - 60, now + 600))).toBe(true);
    });

    it('serialises concurrent rotations: one current secret, one in grace', async () => {
      const site = await createSite(app, owner);
      const rotations = await Promise.all([rotate(site), rotate(site), rotate(site)]);
      expect(rotations.map((rotation) => rotation.status)).toEqual([200, 200, 200]);
      const rows = await app.database.prisma.siteSecret.findMany({ where: { siteId: site.siteId } });
      expect(rows.filter((row) => row.retiresAt === null)).toHaveLength(1);
      expect(rows).toHaveLength(2);
    });

    it.each([
      [{ grace_seconds: 601 }, 'less_than_equal'],
      [{ grace_seconds: -1 }, 'greater_than_equal'],
      [{ grace_seconds: 1.5 }, 'int_type'],
      [{ grace_seconds: '0' }, 'int_type'],
      [{ grace_seconds: null }, 'int_type'],
    ])('answers %j with 422 and rotates nothing', async (body, type) => {
      const site = await createSite(app, owner);
      const response = await rotate(site, body);
      expect(response.status).toBe(422);
      expect(response.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'grace_seconds'], type })]);
      expect(await app.database.prisma.siteSecret.count({ where: { siteId: site.siteId } })).toBe(1);
      expect(await isValid(site, tokenSignedBy(site, site.kid, site.secret))).toBe(true);
    });

    it('documents grace_seconds in the OpenAPI document', async () => {
      const document = (await app.call('GET', '/v1/openapi.json')).body;
      const operation = document.paths['/v1/sites/{site_id}/secret/rotate'].post;
      const ref: string = operation.requestBody.content['application/json'].schema.$ref;
      const schema = document.components.schemas[ref.split('/').pop()!];
      expect(schema.properties.grace_seconds).toMatchObject({ type: 'integer', minimum: 0 });
      expect(schema.properties.grace_seconds.description).toMatch(/SECRET_GRACE_SECONDS/);
      expect(operation.requestBody.required).toBe(false);
    });
  });

  it('stores no plaintext site token or secret in any table', async () => {
    const site = await createSite(app, owner);
    const rotated = await app.call('POST', `/v1/sites/${site.siteId}/secret/rotate`, { headers: owner.auth });
    const dump = JSON.stringify(
      await Promise.all(
        ['publishers', 'sites', 'price_rules', 'site_secrets'].map((table) =>
          app.database.sql.query(`SELECT * FROM ${table}`),
        ),
      ),
      (_, value) =>
        typeof value === 'bigint'
          ? value.toString()
          : value instanceof Uint8Array
            ? Buffer.from(value).toString('latin1')
            : value,
    );
    for (const secret of [site.siteToken, site.secret, rotated.body.access_token_secret, owner.apiKey]) {
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(secret.slice(-20));
    }
  });
});

describe('sites per publisher', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ config: { maxSitesPerPublisher: 3 } });
  });
  afterAll(() => app.close());

  const create = (publisher: TestPublisher, domain: string) =>
    app.call('POST', '/v1/sites', { body: { domain }, headers: publisher.auth });

  it('holds each publisher to MAX_SITES_PER_PUBLISHER, sites created at once included, and frees a place on delete', async () => {
    const owner = await registerPublisher(app);
    for (const domain of ['one.example', 'two.example']) expect((await create(owner, domain)).status).toBe(201);
    // Twenty at once for the last place: one gets it.
    const racing = await Promise.all(Array.from({ length: 20 }, (_, i) => create(owner, `race-${i}.example`)));
    expect(racing.filter((r) => r.status === 201)).toHaveLength(1);
    expect(racing.filter((r) => r.status === 409)).toHaveLength(19);
    const refused = racing.find((r) => r.status === 409)!;
    expect(refused.body.detail).toMatch(/3 sites/);
    expect((await app.call('GET', '/v1/sites', { headers: owner.auth })).body.items).toHaveLength(3);
    // Another publisher has places of its own.
    expect((await create(await registerPublisher(app), 'one.example')).status).toBe(201);
    const [first] = (await app.call('GET', '/v1/sites', { headers: owner.auth })).body.items;
    expect((await app.call('DELETE', `/v1/sites/${first.site_id}`, { headers: owner.auth })).status).toBe(200);
    expect((await create(owner, 'again.example')).status).toBe(201);
  });
});
