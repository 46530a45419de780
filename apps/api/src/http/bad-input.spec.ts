import fc from 'fast-check';
import {
  createSite,
  freshIp,
  openGate,
  pricedSite,
  registerPublisher,
  type TestPublisher,
  type TestSite,
} from '../../test/fixtures';
import { newWallet } from '../../test/test-agent';
import { startTestApp, type CallResult, type TestApp } from '../../test/test-app';

/*
 * Random and hostile bodies against every endpoint that reads one: never a 500, every error
 * carries a `detail`, and a rejected pricing change leaves the stored pricing untouched.
 */

const RUNS = 25;

/** Characters no field accepts: NUL and the other C0 and C1 controls, DEL, lone surrogates. */
const FORBIDDEN = [
  '\u0000',
  '\u0001',
  '\u0007',
  '\t',
  '\n',
  '\r',
  '\u001b',
  '\u001f',
  '\u007f',
  '\u0080',
  '\u0085',
  '\u009f',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
];
/** Byte sequences that are not UTF-8: bad lead and stray continuation bytes, overlong forms, encoded surrogates, cut-off sequences. */
const NOT_UTF8 = [
  [0xff],
  [0xfe],
  [0x80],
  [0xbf],
  [0xc0, 0x80],
  [0xc1, 0xbf],
  [0xe0, 0x80, 0x80],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xe2, 0x82],
  [0xc3],
].map((bytes) => Uint8Array.from(bytes));

/** Any text, hostile characters included. */
const anyText = (maxLength?: number) =>
  fc.string({
    unit: fc.oneof(fc.constantFrom(...FORBIDDEN), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
    maxLength,
  });
/**
 * Text holding at least one character no field accepts. Filtered, because two lone surrogates side
 * by side make one valid character (a high one ending `before`, the low one of `bad`: U+10FC00).
 */
const forbiddenText = fc
  .tuple(anyText(20), fc.constantFrom(...FORBIDDEN), anyText(20))
  .map(([before, bad, after]) => before + bad + after)
  .filter((text) => /[\p{Cc}\p{Cs}]/u.test(text));

/** Bodies shaped like ours (the right field names) with anything in them, plus any JSON at all. */
function bodies(fields: string[]) {
  const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), anyText(5000), fc.double(), fc.constant(null));
  const key = fc.oneof(fc.constantFrom(...fields), anyText(10));
  return fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.dictionary(key, value), fc.array(fc.dictionary(key, value)));
}

/** Our field names, at least one of them holding a forbidden character (or a key that does). */
function bodiesWithForbiddenText(fields: string[]) {
  const withBadValue = fc
    .tuple(fc.dictionary(fc.constantFrom(...fields), fc.string()), fc.constantFrom(...fields), forbiddenText)
    .map(([body, field, bad]) => ({ ...body, [field]: bad }));
  const withBadKey = fc
    .tuple(fc.dictionary(fc.constantFrom(...fields), fc.string()), forbiddenText)
    .map(([body, bad]) => ({ ...body, [bad]: 'x' }));
  const nested = fc
    .tuple(fc.constantFrom(...fields), fc.constantFrom(...fields), forbiddenText)
    .map(([outer, inner, bad]) => ({ [outer]: [{ [inner]: bad }] }));
  return fc.oneof(withBadValue, withBadKey, nested);
}

/** A JSON object `{field: "…"}` whose string holds raw bytes that are not UTF-8. */
function bodiesNotUtf8(fields: string[]) {
  return fc
    .tuple(fc.constantFrom(...fields), fc.string(), fc.constantFrom(...NOT_UTF8), fc.string())
    .map(([field, before, bytes, after]) =>
      Buffer.concat([
        Buffer.from(`{${JSON.stringify(field)}:${JSON.stringify(before).slice(0, -1)}`),
        bytes,
        Buffer.from(`${JSON.stringify(after).slice(1)}}`),
      ]),
    );
}

function deeplyNested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

describe('bad input never breaks the API', () => {
  let app: TestApp;
  let publisher: TestPublisher;
  let site: TestSite;
  let gateId: string;
  beforeAll(async () => {
    app = await startTestApp({ isolateChain: true });
    ({ publisher, site } = await pricedSite(app, newWallet().address));
    gateId = (await openGate(app, site, '/fuzz/gate')).id;
  });
  afterAll(() => app.close());

  async function expectHandled(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
    raw = false,
  ) {
    const response = await app.call(method, path, { body, headers, rawBody: raw });
    expect(response.status).toBeLessThan(500);
    if (response.status >= 400) expect(response.body).toHaveProperty('detail');
    return response;
  }

  const endpoints: [string, string, () => string, string[], () => Record<string, string>][] = [
    [
      'POST',
      'register',
      () => '/v1/publishers/register',
      ['email', 'password', 'name'],
      () => ({ 'x-forwarded-for': freshIp() }),
    ],
    ['POST', 'login', () => '/v1/publishers/login', ['email', 'password'], () => ({ 'x-forwarded-for': freshIp() })],
    ['PATCH', 'publisher', () => '/v1/publishers/me', ['name', 'payout_address'], () => publisher.auth],
    ['POST', 'site', () => '/v1/sites', ['domain', 'name'], () => publisher.auth],
    ['PATCH', 'site', () => `/v1/sites/${site.siteId}`, ['domain', 'name'], () => publisher.auth],
    [
      'PUT',
      'pricing',
      () => `/v1/sites/${site.siteId}/pricing`,
      ['default_price_usd', 'rules', 'path', 'path_pattern', 'price_usd'],
      () => publisher.auth,
    ],
    ['POST', 'gate', () => '/v1/gates', ['url'], () => ({ 'x-site-token': site.siteToken })],
    ['POST', 'verify', () => `/v1/gates/${gateId}/verify`, ['payment', 'tx_hash', 'signature'], () => ({})],
    [
      'POST',
      'token check',
      () => '/v1/access-tokens/verify',
      ['token', 'url'],
      () => ({ 'x-site-token': site.siteToken }),
    ],
    ['POST', 'faucet', () => '/v1/dev/faucet', ['address', 'amount_usd'], () => ({})],
  ];

  describe.each(endpoints)('%s %s', (method, _name, path, fields, headers) => {
    it('answers random bodies with a 2xx or a 4xx that has a detail', async () => {
      await fc.assert(
        fc.asyncProperty(bodies(fields), async (body) => {
          await expectHandled(method, path(), body, headers());
        }),
        { numRuns: RUNS },
      );
    });

    it('answers NUL, lone surrogates and control characters anywhere in the body with a 4xx', async () => {
      await fc.assert(
        fc.asyncProperty(bodiesWithForbiddenText(fields), async (body) => {
          const response = await expectHandled(method, path(), body, headers());
          expect(response.status).toBeGreaterThanOrEqual(400);
        }),
        { numRuns: RUNS },
      );
    });

    it('answers a body that is not UTF-8 with 400, never reading it as U+FFFD', async () => {
      await fc.assert(
        fc.asyncProperty(bodiesNotUtf8(fields), async (body) => {
          const response = await expectHandled(method, path(), body, headers(), true);
          expect(response.status).toBe(400);
          expect(response.body.detail).toMatch(/UTF-8/);
        }),
        { numRuns: RUNS },
      );
    });

    it('answers deep nesting, a huge string and a non-JSON body with a 4xx', async () => {
      for (const raw of [
        deeplyNested(5000),
        `{"${fields[0]}": "${'x'.repeat(300_000)}"}`,
        '{"unterminated": ',
        '\u0000\u0001',
      ]) {
        const response = await expectHandled(method, path(), raw, headers(), true);
        expect(response.status).toBeGreaterThanOrEqual(400);
      }
    });
  });

  it('keeps the stored pricing whole when a change is rejected', async () => {
    const publisherOwn = await registerPublisher(app);
    const own = await createSite(app, publisherOwn);
    const good = {
      default_price_usd: '0.003',
      rules: [
        { path: '/a/*', price_usd: '0.01' },
        { path: '/b', price_usd: '0' },
      ],
    };
    expect(
      (await app.call('PUT', `/v1/sites/${own.siteId}/pricing`, { body: good, headers: publisherOwn.auth })).status,
    ).toBe(200);
    await fc.assert(
      fc.asyncProperty(bodies(['default_price_usd', 'rules', 'path', 'price_usd']), async (body) => {
        const response = await app.call('PUT', `/v1/sites/${own.siteId}/pricing`, { body, headers: publisherOwn.auth });
        const stored = (await app.call('GET', `/v1/sites/${own.siteId}/pricing`, { headers: publisherOwn.auth })).body;
        if (response.status !== 200)
          expect(stored).toMatchObject({
            default_price_usd: '0.003',
            rules: [
              { path: '/a/*', price_usd: '0.01' },
              { path: '/b', price_usd: '0' },
            ],
          });
        else await app.call('PUT', `/v1/sites/${own.siteId}/pricing`, { body: good, headers: publisherOwn.auth });
      }),
      { numRuns: RUNS },
    );
  });
});

describe('characters no field accepts', () => {
  let app: TestApp;
  let publisher: TestPublisher;
  let site: TestSite;
  beforeAll(async () => {
    app = await startTestApp();
    ({ publisher, site } = await pricedSite(app, newWallet().address));
  });
  afterAll(() => app.close());

  const rejected = (response: CallResult, loc: (string | number)[]) => {
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ loc, type: 'forbidden_character', msg: expect.stringMatching(/U\+[0-9A-F]{4}/) }),
    ]);
  };

  it.each([
    ['NUL', 'a\u0000b'],
    ['a lone high surrogate', 'a\ud800b'],
    ['a lone low surrogate', '\udc00'],
    ['a C0 control', 'a\u001bb'],
    ['DEL', 'a\u007f'],
    ['a C1 control', 'a\u0085b'],
    ['a newline', 'a\nb'],
  ])('answers %s in the publisher name with 422, and stores nothing', async (_, name) => {
    rejected(await app.call('PATCH', '/v1/publishers/me', { body: { name }, headers: publisher.auth }), [
      'body',
      'name',
    ]);
    expect((await app.call('GET', '/v1/publishers/me', { headers: publisher.auth })).body.name).toBe('Test Publisher');
  });

  it('answers NUL in a site name, on creation and on update, with 422', async () => {
    rejected(
      await app.call('POST', '/v1/sites', {
        body: { domain: 'nul.example.com', name: 'Blog\u0000' },
        headers: publisher.auth,
      }),
      ['body', 'name'],
    );
    const sites = (await app.call('GET', '/v1/sites', { headers: publisher.auth })).body.items;
    expect(sites.map((item: { domain: string }) => item.domain)).not.toContain('nul.example.com');
    rejected(
      await app.call('PATCH', `/v1/sites/${site.siteId}`, { body: { name: '\u0000' }, headers: publisher.auth }),
      ['body', 'name'],
    );
  });

  it('answers NUL in a pricing rule path with 422 and keeps the stored rules', async () => {
    const before = (await app.call('GET', `/v1/sites/${site.siteId}/pricing`, { headers: publisher.auth })).body;
    const body = {
      default_price_usd: '0.5',
      rules: [
        { path: '/ok/*', price_usd: '0' },
        { path: '/a\u0000', price_usd: '0' },
      ],
    };
    rejected(await app.call('PUT', `/v1/sites/${site.siteId}/pricing`, { body, headers: publisher.auth }), [
      'body',
      'rules',
      1,
      'path',
    ]);
    expect((await app.call('GET', `/v1/sites/${site.siteId}/pricing`, { headers: publisher.auth })).body).toEqual(
      before,
    );
  });

  it('answers NUL in the login email with 422, before any credential is checked', async () => {
    const response = await app.call('POST', '/v1/publishers/login', {
      body: { email: 'a\u0000@example.com', password: 'whatever pw' },
      headers: { 'x-forwarded-for': freshIp() },
    });
    rejected(response, ['body', 'email']);
  });

  it('never echoes a password back: a refused one is named, not shown', async () => {
    const short = await app.call('POST', '/v1/publishers/register', {
      body: { email: `echo-${freshIp()}@example.com`, password: 'Sh0rt!' },
      headers: { 'x-forwarded-for': freshIp() },
    });
    const long = await app.call('POST', '/v1/publishers/login', {
      body: { email: 'echo@example.com', password: `Secret-${'x'.repeat(300)}` },
      headers: { 'x-forwarded-for': freshIp() },
    });
    const typed = await app.call('POST', '/v1/publishers/login', {
      body: { email: 'echo@example.com', password: 12345678 },
      headers: { 'x-forwarded-for': freshIp() },
    });
    for (const response of [short, long, typed]) {
      expect(response.status).toBe(422);
      const item = response.body.detail.find((entry: { loc: unknown[] }) => entry.loc[1] === 'password');
      expect(item).toMatchObject({ loc: ['body', 'password'] });
      expect(item).not.toHaveProperty('input');
    }
    expect(JSON.stringify(short.body)).not.toContain('Sh0rt!');
    expect(JSON.stringify(long.body)).not.toContain('Secret-');
    expect(JSON.stringify(typed.body)).not.toContain('12345678');
    // Other fields still show what was sent.
    expect(short.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'password'] })]);
    const email = await app.call('POST', '/v1/publishers/register', {
      body: { email: 'not-an-email', password: 'long enough pw' },
      headers: { 'x-forwarded-for': freshIp() },
    });
    expect(email.body.detail[0]).toMatchObject({ loc: ['body', 'email'], input: 'not-an-email' });
  });

  it('never echoes a new or current password, nor a token, back either', async () => {
    const change = await app.call('POST', '/v1/publishers/me/password', {
      body: { current_password: `Current-${'y'.repeat(300)}`, new_password: 'Hunter2' },
      headers: publisher.auth,
    });
    expect(change.status).toBe(422);
    expect(change.body.detail.map((item: { loc: unknown[] }) => item.loc)).toEqual(
      expect.arrayContaining([['body', 'new_password']]),
    );
    for (const item of change.body.detail) expect(item).not.toHaveProperty('input');
    expect(JSON.stringify(change.body)).not.toMatch(/Hunter2|Current-/);
    const verify = await app.call('POST', '/v1/access-tokens/verify', {
      body: { token: `eyJ${'t'.repeat(9000)}` },
      headers: { 'x-site-token': site.siteToken },
    });
    expect(verify.status).toBe(422);
    expect(JSON.stringify(verify.body)).not.toContain('tttt');
  });

  it('answers NUL in a gate URL with 422', async () => {
    rejected(
      await app.call('POST', '/v1/gates', { body: { url: '/a\u0000' }, headers: { 'x-site-token': site.siteToken } }),
      ['body', 'url'],
    );
  });

  it('prices a gate URL with %00 as the path "/a%00": the escape is kept, never decoded to NUL', async () => {
    const response = await app.call('POST', '/v1/gates', {
      body: { url: '/a%00' },
      headers: { 'x-site-token': site.siteToken },
    });
    expect(response.status).toBe(402);
    expect(response.body.url).toBe('/a%00');
  });

  it('answers a field name holding NUL with 422', async () => {
    rejected(
      await app.call('PATCH', `/v1/sites/${site.siteId}`, { body: { 'na\u0000me': 'x' }, headers: publisher.auth }),
      ['body', 'na\u0000me'],
    );
  });

  it('answers NUL in a query parameter and in a path parameter with 422', async () => {
    rejected(
      await app.call('GET', `/v1/sites/${site.siteId}/pricing/resolve?path=/a%00`, { headers: publisher.auth }),
      ['query', 'path'],
    );
    rejected(await app.call('GET', '/v1/gates/a%00b'), ['path', 'id']);
  });

  it('answers a path that is not UTF-8 once decoded with 400 and a detail', async () => {
    const response = await app.call('GET', '/v1/gates/a%ffb');
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ detail: expect.stringMatching(/URL/) });
  });

  it.each([
    ['a price too small for a double, read as 0 (free)', '1e-400'],
    ['a price above 1 USD rounded to 1', '1.0000000000000001'],
    ['a price of 18 digits rounded to 0.005', '0.0050000000000000001'],
    ['a price with 400 zeros before its digit', `0.${'0'.repeat(400)}1`],
  ])('refuses %s with 400, and stores nothing: a JSON number is taken only as written', async (_what, literal) => {
    // JSON.parse rounds a number to the nearest double before any check reads it.
    const publisher = await registerPublisher(app);
    const site = await createSite(app, publisher);
    const pricing = (text: string) =>
      app.call('PUT', `/v1/sites/${site.siteId}/pricing`, {
        body: Buffer.from(`{"default_price_usd":"0.003","rules":[{"path":"/tiny/*","price_usd":${text}}]}`),
        rawBody: true,
        headers: { ...publisher.auth, 'content-type': 'application/json' },
      });
    const refused = await pricing(literal);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(/number .* not exactly .* send it as a string/i);
    const stored = await app.call('GET', `/v1/sites/${site.siteId}/pricing`, { headers: publisher.auth });
    expect(stored.body.rules).toEqual([]);
    // Numbers a double holds as written are read as before.
    for (const exact of ['0.005', '1e-3', '0.50', '5E-3', '-0'])
      expect([exact, (await pricing(exact)).status]).toEqual([exact, 200]);
  });

  it('quotes no number it refuses: a password of digits sent as a number is not echoed', async () => {
    const digits = '123456789012345678901234567';
    const refused = await app.call('POST', '/v1/publishers/login', {
      body: Buffer.from(`{"email":"a@example.com","password":${digits}}`),
      rawBody: true,
      headers: { 'x-forwarded-for': freshIp(), 'content-type': 'application/json' },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).not.toContain(digits.slice(0, 12));
  });

  it('answers invalid UTF-8 in a body with 400, on an endpoint that needs no credential too', async () => {
    const body = Buffer.concat([
      Buffer.from('{"email":"a'),
      Buffer.from([0xc0, 0x80]),
      Buffer.from('@example.com","password":"whatever pw"}'),
    ]);
    const response = await app.call('POST', '/v1/publishers/login', {
      body,
      rawBody: true,
      headers: { 'x-forwarded-for': freshIp() },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ detail: 'Request body is not valid UTF-8' });
  });
});

describe('header injection', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('never turns a CR/LF in a URL into a response header', async () => {
    const { site } = await pricedSite(app, newWallet().address);
    for (const url of [
      '/a%0d%0aSet-Cookie:%20stolen=1',
      '/a\r\nSet-Cookie: stolen=1',
      'https://x.example/a%0D%0AX-Injected:%201',
    ]) {
      const response = await app.call('POST', '/v1/gates', {
        body: { url },
        headers: { 'x-site-token': site.siteToken },
      });
      expect([402, 422]).toContain(response.status);
      expect(response.headers.get('set-cookie')).toBeNull();
      expect(response.headers.get('x-injected')).toBeNull();
      if (response.status === 402) {
        // The v2 header carries the URL base64-encoded: nothing of it can break the header line.
        expect(response.headers.get('payment-required')).toMatch(/^[A-Za-z0-9+/=]+$/);
      }
    }
  });
});
