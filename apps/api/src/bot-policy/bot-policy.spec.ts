import {
  BOT_CATEGORIES,
  DEFAULT_CATEGORY_ACTIONS,
  DEFAULT_CATEGORY_ACTIONS_VERSION,
  MAX_POLICY_BOTS,
} from '@crawlgate/core';
import { createSite, registerPublisher, type TestPublisher, type TestSite } from '../../test/fixtures';
import { startTestApp, type TestApp } from '../../test/test-app';

const EMPTY = { categories: {}, bots: {}, require_signature: { categories: [], bots: [] } };

describe('bot policy API', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  /** A publisher and site of its own per test: the per-credential rate limit stays out of the way. */
  async function owner(): Promise<{
    publisher: TestPublisher;
    site: TestSite;
    path: string;
    headers: Record<string, string>;
  }> {
    const publisher = await registerPublisher(app);
    const site = await createSite(app, publisher);
    return { publisher, site, path: `/v1/sites/${site.siteId}/bot-policy`, headers: publisher.auth };
  }

  it('answers empty rules, the middleware defaults and version 0 while nothing is set', async () => {
    const { site, path, headers } = await owner();
    const response = await app.call('GET', path, { headers });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      site_id: site.siteId,
      ...EMPTY,
      defaults: DEFAULT_CATEGORY_ACTIONS,
      version: 0,
      updated_at: null,
    });
  });

  it('stores a whole policy under the catalogue spelling and order, and replaces it whole', async () => {
    const { site, path, headers } = await owner();
    const put = await app.call('PUT', path, {
      headers,
      body: {
        categories: { seo: 'block', 'ai-training': 'allow' },
        bots: { googlebot: 'charge', GPTBOT: 'block', 'unknown-crawler': 'allow', 'yahoo! slurp': 'block' },
        require_signature: {
          categories: ['ai-assistant', 'ai-assistant'],
          bots: ['chatgpt-user', 'ChatGPT-User', 'PerplexityBot'],
        },
      },
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      site_id: site.siteId,
      categories: { 'ai-training': 'allow', seo: 'block' },
      bots: { GPTBot: 'block', Googlebot: 'charge', 'Yahoo! Slurp': 'block', 'unknown-crawler': 'allow' },
      require_signature: { categories: ['ai-assistant'], bots: ['ChatGPT-User', 'PerplexityBot'] },
      defaults: DEFAULT_CATEGORY_ACTIONS,
      version: 1,
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    // Key order is part of the answer: the catalogue's, not the database's.
    expect(Object.keys(put.body.bots)).toEqual(['GPTBot', 'Googlebot', 'Yahoo! Slurp', 'unknown-crawler']);
    expect((await app.call('GET', path, { headers })).body).toEqual(put.body);

    const replaced = await app.call('PUT', path, { headers, body: { categories: { automation: 'block' } } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      categories: { automation: 'block' },
      bots: {},
      require_signature: { categories: [], bots: [] },
      version: 2,
    });
    const cleared = await app.call('PUT', path, { headers }); // no body: {} clears everything
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ ...EMPTY, version: 3 });
  });

  describe('a bad policy answers 422 with the detail list and stores nothing', () => {
    let site: Awaited<ReturnType<typeof owner>>;
    beforeAll(async () => {
      site = await owner();
      expect(
        (await app.call('PUT', site.path, { headers: site.headers, body: { bots: { GPTBot: 'block' } } })).status,
      ).toBe(200);
    });

    it.each<[string, unknown, { loc: (string | number)[]; type: string }[]]>([
      [
        'an unknown category',
        { categories: { 'ai-agents': 'block' } },
        [{ loc: ['body', 'categories', 'ai-agents'], type: 'enum' }],
      ],
      ['an unknown action', { categories: { seo: 'deny' } }, [{ loc: ['body', 'categories', 'seo'], type: 'enum' }]],
      ['an action of the wrong type', { bots: { GPTBot: true } }, [{ loc: ['body', 'bots', 'GPTBot'], type: 'enum' }]],
      [
        'a bot not in the catalogue',
        { bots: { 'GPT-Bot': 'block' } },
        [{ loc: ['body', 'bots', 'GPT-Bot'], type: 'bot_name' }],
      ],
      [
        'a robots.txt-only token',
        { bots: { 'Google-Extended': 'block' } },
        [{ loc: ['body', 'bots', 'Google-Extended'], type: 'bot_robots_txt_only' }],
      ],
      [
        'one bot in two spellings',
        { bots: { GPTBot: 'block', gptbot: 'allow' } },
        [{ loc: ['body', 'bots', 'gptbot'], type: 'bot_duplicate' }],
      ],
      [
        'categories that are not an object',
        { categories: ['seo'] },
        [{ loc: ['body', 'categories'], type: 'dict_type' }],
      ],
      ['bots as null', { bots: null }, [{ loc: ['body', 'bots'], type: 'dict_type' }]],
      [
        'require_signature as a list',
        { require_signature: ['GPTBot'] },
        [{ loc: ['body', 'require_signature'], type: 'dict_type' }],
      ],
      [
        'require_signature lists that are not lists',
        { require_signature: { categories: 'seo', bots: 'GPTBot' } },
        [
          { loc: ['body', 'require_signature', 'categories'], type: 'list_type' },
          { loc: ['body', 'require_signature', 'bots'], type: 'list_type' },
        ],
      ],
      [
        'unknown names in require_signature',
        { require_signature: { categories: ['seo', 'robots'], bots: ['ClaudeBot', 'Claude', 7] } },
        [
          { loc: ['body', 'require_signature', 'categories', 1], type: 'enum' },
          { loc: ['body', 'require_signature', 'bots', 1], type: 'bot_name' },
          { loc: ['body', 'require_signature', 'bots', 2], type: 'string_type' },
        ],
      ],
      [
        'too many bots',
        { bots: Object.fromEntries(Array.from({ length: MAX_POLICY_BOTS + 1 }, (_, i) => [`bot-${i}`, 'block'])) },
        [{ loc: ['body', 'bots'], type: 'too_long' }],
      ],
      [
        'a too long require_signature list',
        { require_signature: { bots: Array.from({ length: MAX_POLICY_BOTS + 1 }, () => 'GPTBot') } },
        [{ loc: ['body', 'require_signature', 'bots'], type: 'too_long' }],
      ],
      ['a body that is not an object', ['GPTBot'], [{ loc: ['body'], type: 'dict_type' }]],
    ])('%s', async (_, body, expected) => {
      const response = await app.call('PUT', site.path, { headers: site.headers, body });
      expect(response.status).toBe(422);
      expect(response.body.detail.map(({ loc, type }: { loc: unknown; type: unknown }) => ({ loc, type }))).toEqual(
        expected,
      );
      for (const item of response.body.detail) expect(typeof item.msg).toBe('string');
      const stored = (await app.call('GET', site.path, { headers: site.headers })).body;
      expect(stored).toMatchObject({ bots: { GPTBot: 'block' }, version: 1 });
    });

    it('says which names and actions are allowed', async () => {
      const response = await app.call('PUT', site.path, {
        headers: site.headers,
        body: { categories: { seo: 'deny' }, bots: { 'GPT-Bot': 'block' } },
      });
      expect(response.body.detail).toEqual([
        {
          loc: ['body', 'categories', 'seo'],
          msg: '"deny" is not an action: use "allow", "charge", "block"',
          type: 'enum',
          input: 'deny',
          ctx: { expected: ['allow', 'charge', 'block'] },
        },
        {
          loc: ['body', 'bots', 'GPT-Bot'],
          msg: '"GPT-Bot" is no bot of the catalogue (nor unknown-crawler or unknown-automation)',
          type: 'bot_name',
          input: 'GPT-Bot',
        },
      ]);
    });
  });

  describe('one crawler at a time (the dashboard’s one-click action)', () => {
    it('sets, changes and removes one crawler’s action, keeping the rest, and answers the whole policy', async () => {
      const { site, path, headers } = await owner();
      await app.call('PUT', path, {
        headers,
        body: {
          categories: { seo: 'block' },
          bots: { ClaudeBot: 'allow' },
          require_signature: { bots: ['ChatGPT-User'] },
        },
      });

      const set = await app.call('PUT', `${path}/bots/gptbot`, { headers, body: { action: 'block' } });
      expect(set.status).toBe(200);
      expect(set.body).toEqual({
        site_id: site.siteId,
        categories: { seo: 'block' },
        bots: { GPTBot: 'block', ClaudeBot: 'allow' },
        require_signature: { categories: [], bots: ['ChatGPT-User'] },
        defaults: DEFAULT_CATEGORY_ACTIONS,
        version: 2,
        updated_at: expect.any(String),
      });
      expect(
        (await app.call('PUT', `${path}/bots/GPTBot`, { headers, body: { action: 'charge' } })).body,
      ).toMatchObject({ bots: { GPTBot: 'charge', ClaudeBot: 'allow' }, version: 3 });
      expect(
        (
          await app.call('PUT', `${path}/bots/${encodeURIComponent('Yahoo! Slurp')}`, {
            headers,
            body: { action: 'allow' },
          })
        ).body.bots,
      ).toEqual({
        GPTBot: 'charge',
        ClaudeBot: 'allow',
        'Yahoo! Slurp': 'allow',
      });

      const removed = await app.call('DELETE', `${path}/bots/GPTBOT`, { headers });
      expect(removed.status).toBe(200);
      expect(removed.body).toMatchObject({ bots: { ClaudeBot: 'allow', 'Yahoo! Slurp': 'allow' }, version: 5 });
      // Removing what is not there changes nothing, not even the version.
      const again = await app.call('DELETE', `${path}/bots/GPTBot`, { headers });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(removed.body);
    });

    it('creates the policy on a first one-click action, and a removal on a site with none answers the empty policy', async () => {
      const { path, headers } = await owner();
      expect((await app.call('DELETE', `${path}/bots/GPTBot`, { headers })).body).toMatchObject({
        ...EMPTY,
        version: 0,
        updated_at: null,
      });
      expect(
        (await app.call('PUT', `${path}/bots/AhrefsBot`, { headers, body: { action: 'block' } })).body,
      ).toMatchObject({
        ...EMPTY,
        bots: { AhrefsBot: 'block' },
        version: 1,
      });
    });

    it('keeps every one of concurrent changes to different crawlers', async () => {
      const { path, headers } = await owner();
      const names = ['GPTBot', 'ClaudeBot', 'CCBot', 'Bytespider', 'PerplexityBot', 'AhrefsBot', 'SemrushBot', 'curl'];
      const answers = await Promise.all(
        names.map((name) => app.call('PUT', `${path}/bots/${name}`, { headers, body: { action: 'block' } })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(names.map(() => 200));
      const stored = (await app.call('GET', path, { headers })).body;
      expect(Object.keys(stored.bots).sort()).toEqual([...names].sort());
      expect(stored.version).toBe(names.length);
    });

    it.each<[string, string, unknown, { loc: (string | number)[]; type: string }]>([
      ['an unknown crawler', 'GPT-Bot', { action: 'block' }, { loc: ['path', 'name'], type: 'bot_name' }],
      [
        'a robots.txt-only token',
        'Applebot-Extended',
        { action: 'block' },
        { loc: ['path', 'name'], type: 'bot_robots_txt_only' },
      ],
      ['an unknown action', 'GPTBot', { action: 'deny' }, { loc: ['body', 'action'], type: 'enum' }],
      ['no action', 'GPTBot', {}, { loc: ['body', 'action'], type: 'missing' }],
      ['an action of the wrong type', 'GPTBot', { action: ['block'] }, { loc: ['body', 'action'], type: 'enum' }],
    ])('answers 422 for %s and changes nothing', async (_, name, body, expected) => {
      const { path, headers } = await owner();
      const response = await app.call('PUT', `${path}/bots/${encodeURIComponent(name)}`, { headers, body });
      expect(response.status).toBe(422);
      expect(response.body.detail).toEqual([expect.objectContaining(expected)]);
      expect((await app.call('GET', path, { headers })).body).toMatchObject({ ...EMPTY, version: 0 });
    });

    it('answers 422 for removing a crawler that is not in the catalogue', async () => {
      const { path, headers } = await owner();
      const response = await app.call('DELETE', `${path}/bots/NoSuchBot`, { headers });
      expect(response.status).toBe(422);
      expect(response.body.detail).toEqual([expect.objectContaining({ loc: ['path', 'name'], type: 'bot_name' })]);
    });
  });

  it('answers 404 for another publisher’s site or no site, 401 without a key, and changes nothing', async () => {
    const victim = await owner();
    await app.call('PUT', victim.path, { headers: victim.headers, body: { bots: { GPTBot: 'charge' } } });
    const intruder = await registerPublisher(app);
    const unknown = '/v1/sites/00000000-0000-4000-8000-000000000000/bot-policy';
    for (const path of [victim.path, unknown, '/v1/sites/not-a-uuid/bot-policy']) {
      expect((await app.call('GET', path, { headers: intruder.auth })).status).toBe(404);
      expect(
        (await app.call('PUT', path, { headers: intruder.auth, body: { bots: { GPTBot: 'allow' } } })).status,
      ).toBe(404);
      expect(
        (await app.call('PUT', `${path}/bots/GPTBot`, { headers: intruder.auth, body: { action: 'allow' } })).status,
      ).toBe(404);
      expect((await app.call('DELETE', `${path}/bots/GPTBot`, { headers: intruder.auth })).status).toBe(404);
    }
    expect((await app.call('GET', victim.path)).status).toBe(401);
    expect((await app.call('PUT', `${victim.path}/bots/GPTBot`, { body: { action: 'allow' } })).status).toBe(401);
    // The site's own token is the middleware's credential, not a publisher's.
    expect(
      (
        await app.call('PUT', `${victim.path}/bots/GPTBot`, {
          headers: { 'x-site-token': victim.site.siteToken },
          body: { action: 'allow' },
        })
      ).status,
    ).toBe(401);
    expect((await app.call('GET', victim.path, { headers: victim.headers })).body).toMatchObject({
      bots: { GPTBot: 'charge' },
      version: 1,
    });
  });

  it('is carried to the site’s middleware by GET /v1/site with every category, the defaults filled in, whose bot_policy.version moves with every change', async () => {
    const { site, path, headers } = await owner();
    const offer = async () => {
      const response = await app.call('GET', '/v1/site', { headers: { 'x-site-token': site.siteToken } });
      expect(response.status).toBe(200);
      return response.body;
    };
    // Every category, the site's own action else today's default (named in default_categories): a
    // middleware of any version applies these. The version counts the defaults' too, so running
    // gates re-read the policy when the defaults change.
    expect((await offer()).bot_policy).toEqual({
      ...EMPTY,
      categories: { ...DEFAULT_CATEGORY_ACTIONS },
      default_categories: [...BOT_CATEGORIES],
      version: DEFAULT_CATEGORY_ACTIONS_VERSION,
    });
    expect((await offer()).bot_policy.categories.seo).toBe('charge');
    await app.call('PUT', path, {
      headers,
      body: { categories: { seo: 'block' }, require_signature: { categories: ['ai-assistant'] } },
    });
    await app.call('PUT', `${path}/bots/gptbot`, { headers, body: { action: 'block' } });
    const after = await offer();
    expect(after.bot_policy).toEqual({
      categories: { ...DEFAULT_CATEGORY_ACTIONS, seo: 'block' },
      default_categories: BOT_CATEGORIES.filter((category) => category !== 'seo'),
      bots: { GPTBot: 'block' },
      require_signature: { categories: ['ai-assistant'], bots: [] },
      version: 2 + DEFAULT_CATEGORY_ACTIONS_VERSION,
    });
    // The pricing's version is the pricing's: a policy change does not reprice.
    expect(after.pricing_version).toBe(0);
  });

  it('goes with its site', async () => {
    const { site, path, headers } = await owner();
    await app.call('PUT', path, { headers, body: { bots: { GPTBot: 'block' } } });
    expect((await app.call('DELETE', `/v1/sites/${site.siteId}`, { headers })).status).toBe(200);
    expect(
      await app.database.sql.query('SELECT site_id FROM bot_policies WHERE site_id = $1::uuid', [site.siteId]),
    ).toEqual([]);
  });
});
