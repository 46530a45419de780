import { MAX_POLICY_BOTS } from '@crawlgate/core';
import { FAKE_API_URL, FAKE_SITE_ID, fakeApi } from '../testing/fake-api';
import { createCrawlgate } from './crawlgate';
import { classifyVisitor, type BotPolicy } from './bots';
import { mergeBotPolicies, readStoredBotPolicy, refreshBotPolicy } from './stored-bot-policy';

const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const CLAUDEBOT =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
const AHREFS = 'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const TWITTERBOT = 'Twitterbot/1.0';

const stored = (changes: Record<string, unknown> = {}) => ({
  categories: {},
  bots: {},
  require_signature: { categories: [], bots: [] },
  version: 1,
  ...changes,
});
const action = (ua: string, policy: BotPolicy | undefined) => {
  const visitor = classifyVisitor(ua, policy);
  return visitor.kind === 'bot' ? visitor.action : 'human';
};

describe('readStoredBotPolicy', () => {
  it('takes the stricter of the API’s default and its own for a category the API filled with its default', () => {
    // An API whose defaults are older (seo allowed) than this middleware's (seo charged), and the reverse.
    const older = readStoredBotPolicy(
      stored({ categories: { seo: 'allow', 'search-engine': 'block' }, default_categories: ['seo', 'search-engine'] }),
    );
    expect(older).toMatchObject({ ok: true, policy: { categories: { seo: 'charge', 'search-engine': 'block' } } });
    // The site's own choice is the site's: not in default_categories, kept as it is.
    expect(readStoredBotPolicy(stored({ categories: { seo: 'allow' }, default_categories: [] }))).toMatchObject({
      ok: true,
      policy: { categories: { seo: 'allow' } },
    });
    expect(readStoredBotPolicy(stored({ categories: { seo: 'allow' } }))).toMatchObject({
      ok: true,
      policy: { categories: { seo: 'allow' } },
    });
    // Names it cannot read are skipped, never a reason to loosen anything.
    expect(
      readStoredBotPolicy(stored({ categories: { seo: 'allow' }, default_categories: ['nope', 7, 'seo'] })),
    ).toMatchObject({ ok: true, policy: { categories: { seo: 'charge' } } });
    expect(readStoredBotPolicy(stored({ categories: { seo: 'allow' }, default_categories: 'seo' }))).toEqual({
      ok: false,
      problem: 'default_categories is not a list',
    });
  });

  it('reads what the API sends, in the catalogue spelling', () => {
    expect(
      readStoredBotPolicy(
        stored({
          categories: { seo: 'block' },
          bots: { gptbot: 'allow' },
          require_signature: { categories: ['ai-assistant'], bots: ['ChatGPT-User'] },
          version: 7,
        }),
      ),
    ).toEqual({
      ok: true,
      version: 7,
      policy: {
        categories: { seo: 'block' },
        bots: { GPTBot: 'allow' },
        requireSignature: { categories: ['ai-assistant'], bots: ['ChatGPT-User'] },
      },
      skipped: [],
      unknownActions: [],
    });
  });

  it('skips names from a newer catalogue, which no visitor it classifies can carry', () => {
    const read = readStoredBotPolicy(
      stored({
        categories: { 'ai-agent': 'block', seo: 'block' },
        bots: { FutureBot: 'block' },
        require_signature: { categories: ['ai-agent'], bots: ['FutureBot', 'GPTBot'] },
      }),
    );
    expect(read).toEqual({
      ok: true,
      version: 1,
      policy: { categories: { seo: 'block' }, bots: {}, requireSignature: { categories: [], bots: ['GPTBot'] } },
      skipped: ['category "ai-agent"', 'bot "FutureBot"', 'category "ai-agent"', 'bot "FutureBot"'],
      unknownActions: [],
    });
  });

  it('charges a key whose action it does not know (a newer API’s), keeps the rest, and never allows it', () => {
    // A bot whose category the stored policy blocks stays blocked.
    expect(
      readStoredBotPolicy(stored({ categories: { 'ai-training': 'block' }, bots: { GPTBot: 'rate-limit' } })),
    ).toMatchObject({ ok: true, policy: { bots: { GPTBot: 'block' } } });
    // And one whose category the code blocks.
    expect(
      readStoredBotPolicy(stored({ bots: { GPTBot: 'rate-limit' } }), { categories: { 'ai-training': 'block' } }),
    ).toMatchObject({ ok: true, policy: { bots: { GPTBot: 'block' } } });
    // A code typo ("Block", warned about at start-up) does not stand in for the stored category's block.
    expect(
      readStoredBotPolicy(stored({ categories: { 'ai-training': 'block' }, bots: { GPTBot: 'rate-limit' } }), {
        categories: { 'ai-training': 'Block' as 'block' },
      }),
    ).toMatchObject({ ok: true, policy: { bots: { GPTBot: 'block' } } });
    const read = readStoredBotPolicy(
      stored({
        categories: { seo: 'deny', 'social-preview': 'charge', 'search-engine': { allow: true } },
        bots: { GPTBot: 'block', Bytespider: 'rate-limit', Twitterbot: null, FutureBot: 'rate-limit' },
      }),
    );
    expect(read).toEqual({
      ok: true,
      version: 1,
      policy: {
        categories: { seo: 'charge', 'social-preview': 'charge', 'search-engine': 'charge' },
        bots: { GPTBot: 'block', Bytespider: 'charge', Twitterbot: 'charge' },
        requireSignature: { categories: [], bots: [] },
      },
      skipped: ['bot "FutureBot"'],
      unknownActions: ['category "seo"', 'category "search-engine"', 'bot "Bytespider"', 'bot "Twitterbot"'],
    });
  });

  it.each<[string, unknown]>([
    ['not an object', 'block'],
    ['null', null],
    ['no version', { ...stored(), version: undefined }],
    ['a negative version', stored({ version: -1 })],
    ['a fractional version', stored({ version: 1.5 })],
    ['categories as a list', stored({ categories: ['seo'] })],
    ['bots missing', { ...stored(), bots: undefined }],
    ['require_signature missing', { ...stored(), require_signature: undefined }],
    ['require_signature lists that are not lists', stored({ require_signature: { categories: 'seo', bots: [] } })],
    ['a non-string in a list', stored({ require_signature: { categories: [], bots: [{}] } })],
    [
      'too many bots',
      stored({ bots: Object.fromEntries(Array.from({ length: MAX_POLICY_BOTS + 1 }, (_, i) => [`b${i}`, 'block'])) }),
    ],
  ])('refuses a policy with %s, whole', (_, value) => {
    expect(readStoredBotPolicy(value)).toEqual({ ok: false, problem: expect.any(String) });
  });
});

describe('mergeBotPolicies: the code wins each key it sets', () => {
  const fromApi: BotPolicy = {
    categories: { 'ai-training': 'block', seo: 'block' },
    bots: { GPTBot: 'block', ClaudeBot: 'allow' },
    requireSignature: { categories: ['ai-assistant'], bots: ['GPTBot'] },
  };

  it('replaces the stored entry for a category or bot the code names, in any case, and keeps the rest', () => {
    const merged = mergeBotPolicies(fromApi, { categories: { seo: 'allow' }, bots: { gptbot: 'charge' } });
    expect(merged).toEqual({
      categories: { 'ai-training': 'block', seo: 'allow' },
      bots: { ClaudeBot: 'allow', gptbot: 'charge' },
      requireSignature: { categories: ['ai-assistant'], bots: ['GPTBot'] },
    });
    expect([GPTBOT, CLAUDEBOT, AHREFS].map((ua) => action(ua, merged))).toEqual(['charge', 'allow', 'allow']);
  });

  it('keeps a stored bot’s own action over a category the code sets (a bot’s entry comes before its category’s)', () => {
    const merged = mergeBotPolicies(fromApi, { categories: { 'ai-training': 'charge' } });
    expect([GPTBOT, CLAUDEBOT].map((ua) => action(ua, merged))).toEqual(['block', 'allow']);
  });

  it('joins the signature requirements of both', () => {
    expect(
      mergeBotPolicies(fromApi, {
        requireSignature: { categories: ['ai-search', 'ai-assistant'], bots: ['gptbot', 'ClaudeBot'] },
      }).requireSignature,
    ).toEqual({
      categories: ['ai-assistant', 'ai-search'],
      bots: ['GPTBot', 'ClaudeBot'],
    });
  });

  it('is the stored policy when the code sets none', () => {
    expect(mergeBotPolicies(fromApi, undefined)).toBe(fromApi);
  });
});

describe('refreshBotPolicy', () => {
  const code: BotPolicy = { bots: { AhrefsBot: 'block' } };

  it('applies the code’s policy alone when the API sends none', () => {
    const warnings: string[] = [];
    expect(refreshBotPolicy(undefined, undefined, code, (m) => warnings.push(m))).toEqual({
      version: undefined,
      effective: code,
    });
    expect(warnings).toEqual([]);
  });

  it('charges every category the defaults allow when the first stored policy cannot be read, under the code’s own entries', () => {
    // The stored policy may charge search engines or social previews: until one is read, nothing is allowed by default.
    const warnings: string[] = [];
    const first = refreshBotPolicy(undefined, stored({ categories: 'seo' }), code, (m) => warnings.push(m));
    expect(first.version).toBeUndefined();
    expect(action(GOOGLEBOT, first.effective)).toBe('charge');
    expect(action(TWITTERBOT, first.effective)).toBe('charge');
    expect(action(AHREFS, first.effective)).toBe('block'); // the code's
    const allowing = refreshBotPolicy(
      undefined,
      'garbage',
      { categories: { 'search-engine': 'allow' } },
      () => undefined,
    );
    // A category the code allows is charged too: the stored policy may name one of its bots (helper-347's F1).
    expect(action(GOOGLEBOT, allowing.effective)).toBe('charge');
    const naming = refreshBotPolicy(undefined, 'garbage', { bots: { Googlebot: 'allow' } }, () => undefined);
    expect(action(GOOGLEBOT, naming.effective)).toBe('allow'); // a bot the code names is the code's alone
    expect(warnings).toEqual([
      'the stored bot policy is unreadable (categories, bots or require_signature is not an object); applying the bots named in code, every category charged at least',
    ]);
  });

  it('warns of the keys whose action it does not know, and charges them', () => {
    const warnings: string[] = [];
    const read = refreshBotPolicy(
      undefined,
      stored({ bots: { Twitterbot: 'rate-limit' }, categories: { 'social-preview': 'charge' } }),
      undefined,
      (m) => warnings.push(m),
    );
    expect(action(TWITTERBOT, read.effective)).toBe('charge');
    expect(warnings).toEqual([
      'the stored bot policy gives bot "Twitterbot" an action this version of the middleware does not know; charged',
    ]);
  });

  it('reads again a policy of the same version whose filled defaults differ (API instances of two versions, mid-deploy)', () => {
    const warn = () => undefined;
    // A new API instance: the defaults filled in (seo charge); an old one: the site's own categories only.
    const filled = refreshBotPolicy(
      undefined,
      stored({ categories: { seo: 'charge' }, default_categories: ['seo'], version: 6 }),
      undefined,
      warn,
    );
    expect(action(AHREFS, filled.effective)).toBe('charge');
    // The publisher blocks SEO: the stored policy is now version 6 too, as an old instance sends it.
    const changed = refreshBotPolicy(filled, stored({ categories: { seo: 'block' }, version: 6 }), undefined, warn);
    expect(action(AHREFS, changed.effective)).toBe('block');
    // And the same offer again is not read again.
    expect(refreshBotPolicy(changed, stored({ categories: { seo: 'block' }, version: 6 }), undefined, warn)).toBe(
      changed,
    );
    // Entries that are not strings never throw on their way into the comparison.
    expect(() =>
      refreshBotPolicy(changed, stored({ default_categories: [Object.create(null)], version: 6 }), undefined, warn),
    ).not.toThrow();
  });

  it('keeps the last good policy when a later one cannot be read, and takes the next good one', () => {
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    const good = refreshBotPolicy(undefined, stored({ bots: { GPTBot: 'block' }, version: 3 }), code, warn);
    expect(action(GPTBOT, good.effective)).toBe('block');
    expect(
      refreshBotPolicy(good, stored({ bots: { GPTBot: 'allow' }, categories: 'seo', version: 4 }), code, warn),
    ).toBe(good);
    expect(warnings).toEqual([
      'the stored bot policy is unreadable (categories, bots or require_signature is not an object); keeping the one loaded before',
    ]);
    const next = refreshBotPolicy(good, stored({ bots: { GPTBot: 'allow' }, version: 5 }), code, warn);
    expect([action(GPTBOT, next.effective), action(AHREFS, next.effective)]).toEqual(['allow', 'block']);
  });

  it('keeps the last good policy when a later answer carries none (an older API during a rollout, a proxy rewriting it)', () => {
    // Never a fail-open: dropping the stored policy would serve free the bots it charges or blocks.
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    const good = refreshBotPolicy(undefined, stored({ bots: { AhrefsBot: 'charge' }, version: 3 }), undefined, warn);
    expect(refreshBotPolicy(good, undefined, undefined, warn)).toBe(good);
    expect(warnings).toEqual(['the API sent no stored bot policy; keeping the one loaded before']);
  });

  it('keeps every category charged at least when an unreadable policy is followed by an answer with none', () => {
    // The stored policy may charge what the defaults allow: an answer without one (an older API
    // during a rollout) is no sign that the site stores none.
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    const unreadable = refreshBotPolicy(
      undefined,
      stored({ categories: { 'search-engine': 'charge' }, require_signature: { categories: 'all' }, version: 7 }),
      undefined,
      warn,
    );
    expect(unreadable.effective?.categories?.['search-engine']).toBe('charge');
    const after = refreshBotPolicy(unreadable, undefined, undefined, warn);
    expect(after.effective?.categories?.['search-engine']).toBe('charge');
    expect(after.effective?.categories?.['social-preview']).toBe('charge');
    expect(warnings.at(-1)).toMatch(/sent no stored bot policy/);
    // An API that never sent one (it stores none) leaves the code's policy alone; one sent later
    // that cannot be read charges every category at least, as it would have first.
    const none = refreshBotPolicy(undefined, undefined, undefined, warn);
    expect(none).toEqual({ version: undefined, effective: undefined });
    const unreadableLater = refreshBotPolicy(
      none,
      stored({ categories: { 'search-engine': 'charge' }, require_signature: 'newer-format', version: 8 }),
      undefined,
      warn,
    );
    expect(unreadableLater.effective?.categories?.['search-engine']).toBe('charge');
    expect(warnings.at(-1)).toMatch(/every category charged at least/);
  });

  it('reads a policy again only when its version moves', () => {
    const first = refreshBotPolicy(
      undefined,
      stored({ bots: { GPTBot: 'block' }, version: 2 }),
      undefined,
      () => undefined,
    );
    expect(refreshBotPolicy(first, stored({ bots: { GPTBot: 'block' }, version: 2 }), undefined, () => undefined)).toBe(
      first,
    );
    expect(refreshBotPolicy(first, stored({ bots: {}, version: 3 }), undefined, () => undefined)).not.toBe(first);
  });

  it('warns once per version about names it skipped', () => {
    const warnings: string[] = [];
    refreshBotPolicy(undefined, stored({ bots: { FutureBot: 'block' } }), undefined, (m) => warnings.push(m));
    expect(warnings).toEqual([
      'the stored bot policy names bot "FutureBot", which this version of the middleware does not know; skipped',
    ]);
  });
});

describe('refreshBotPolicy: a policy that frees every signer', () => {
  const anySigner = /anyone can publish a key directory/;

  it('warns, once per version, when the stored policy (or it under the code’s) allows a required signature of unknown automation', () => {
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    const freeing = stored({
      categories: { automation: 'allow' },
      require_signature: { categories: ['automation'], bots: [] },
    });
    const first = refreshBotPolicy(undefined, freeing, undefined, warn);
    expect(warnings).toEqual([expect.stringMatching(anySigner)]);
    // The same version again: no new warning.
    refreshBotPolicy(first, freeing, undefined, warn);
    expect(warnings).toHaveLength(1);
    // Stored allow, code's requirement: the merge frees every signer too.
    const merged = refreshBotPolicy(
      first,
      stored({ categories: { automation: 'allow' }, version: 2 }),
      { requireSignature: { bots: ['unknown-automation'] } },
      warn,
    );
    expect(warnings).toEqual([expect.stringMatching(anySigner), expect.stringMatching(anySigner)]);
    // A stored policy that charges it: no warning.
    refreshBotPolicy(merged, stored({ categories: { automation: 'charge' }, version: 3 }), undefined, warn);
    expect(warnings).toHaveLength(2);
  });

  it('does not warn again for a code policy start-up already warned about', () => {
    const warnings: string[] = [];
    const code: BotPolicy = { categories: { automation: 'allow' }, requireSignature: { categories: ['automation'] } };
    refreshBotPolicy(undefined, stored(), code, (message) => warnings.push(message));
    expect(warnings).toEqual([]);
  });
});

describe('the gate with a stored policy (in-memory API)', () => {
  /** Resolves once `count` more GET /v1/site calls have started: the one before the last has been applied by then. */
  async function refreshes(api: ReturnType<typeof fakeApi>, count: number): Promise<void> {
    const target = api.count('GET /v1/site') + count;
    for (let i = 0; i < 2000 && api.count('GET /v1/site') < target; i++)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(api.count('GET /v1/site')).toBeGreaterThanOrEqual(target);
  }

  it('never lets an unreadable stored policy free a bot: start-up keeps the code’s, later ones keep the last good', async () => {
    const api = fakeApi();
    const offer = (await (await api.fetch(`${FAKE_API_URL}/v1/site`)).json()) as Record<string, unknown>;
    let botPolicy: unknown = { ...stored({ bots: { GPTBot: 'allow' } }), categories: ['seo'] };
    api.answerWith((call) =>
      call === 'GET /v1/site' ? { status: 200, body: { ...offer, bot_policy: botPolicy } } : undefined,
    );
    const warnings: string[] = [];
    const gate = createCrawlgate({
      apiUrl: FAKE_API_URL,
      siteId: FAKE_SITE_ID,
      siteToken: 'st_test',
      secret: 'secret',
      fetch: api.fetch,
      refreshMs: 10,
      policy: { bots: { AhrefsBot: 'block' } },
      logger: { warn: (message) => warnings.push(message) },
      // Which policy wins is the subject: GPTBot's IP ranges (crawler-ips.attack.spec.ts) are not.
      crawlerIps: false,
    });
    const status = async (ua: string) => {
      const decision = await gate.handle({ method: 'GET', url: '/articles/1', headers: { 'user-agent': ua } });
      return decision.kind === 'respond' ? decision.status : 200;
    };
    try {
      await gate.ready();
      expect([await status(GPTBOT), await status(AHREFS)]).toEqual([402, 403]);
      expect(warnings[0]).toMatch(/stored bot policy is unreadable .*applying the bots named in code/);

      botPolicy = stored({ bots: { GPTBot: 'block' }, version: 2 });
      await refreshes(api, 2);
      expect([await status(GPTBOT), await status(AHREFS)]).toEqual([403, 403]);

      botPolicy = { ...stored({ version: 3 }), bots: 'GPTBot=allow' };
      await refreshes(api, 2);
      expect(await status(GPTBOT)).toBe(403);
      expect(warnings.at(-1)).toMatch(/unreadable .*keeping the one loaded before/);

      // The code's own entry wins over the store's for the same bot.
      botPolicy = stored({ bots: { GPTBot: 'allow', AhrefsBot: 'allow' }, version: 4 });
      await refreshes(api, 2);
      expect([await status(GPTBOT), await status(AHREFS)]).toEqual([200, 403]);
    } finally {
      await gate.close();
    }
  });
});
