import {
  BOT_CATALOGUE_ENTRIES,
  policyBotName,
  UNKNOWN_AUTOMATION,
  UNKNOWN_CRAWLER,
  unverifiedAllowWarning,
} from './bot-catalogue';
import {
  BOT_CATEGORIES,
  botActionProblem,
  botNameProblem,
  botPolicyInputProblems,
  DEFAULT_CATEGORY_ACTIONS,
  MAX_POLICY_BOTS,
  normalizeBotPolicy,
} from './bot-policy';

describe('bot policy words', () => {
  it('has a default action for every category and a category for every catalogued crawler', () => {
    expect(Object.keys(DEFAULT_CATEGORY_ACTIONS).sort()).toEqual([...BOT_CATEGORIES].sort());
    for (const entry of BOT_CATALOGUE_ENTRIES) expect(BOT_CATEGORIES).toContain(entry.category);
  });

  it('names a crawler in any case, as the catalogue spells it, and the two unknown names', () => {
    expect(policyBotName('gptbot')).toMatchObject({ name: 'GPTBot', category: 'ai-training', robotsTxtOnly: false });
    expect(policyBotName('YAHOO! SLURP')).toMatchObject({ name: 'Yahoo! Slurp', category: 'search-engine' });
    expect(policyBotName('Google-Extended')).toMatchObject({ robotsTxtOnly: true });
    expect([policyBotName(UNKNOWN_CRAWLER)?.category, policyBotName(UNKNOWN_AUTOMATION)?.category]).toEqual([
      'automation',
      'automation',
    ]);
    expect([
      policyBotName('GPT-Bot'),
      policyBotName(''),
      policyBotName('__proto__'),
      policyBotName('constructor'),
    ]).toEqual([undefined, undefined, undefined, undefined]);
  });
});

describe('unverifiedAllowWarning', () => {
  it('warns of a catalogue crawler nothing verifies, in any case, and of no other', () => {
    expect(unverifiedAllowWarning('ahrefsbot')).toBe(
      'Allowed on its name alone: the gate cannot verify AhrefsBot, so anyone who sends that User-Agent gets your pages free',
    );
    expect(unverifiedAllowWarning('Twitterbot')).toMatch(/cannot verify Twitterbot/);
    expect(unverifiedAllowWarning('Googlebot')).toBeNull(); // Google's published ranges
    expect(unverifiedAllowWarning('YandexBot')).toBeNull(); // Yandex's host names (reverse DNS)
    expect(unverifiedAllowWarning('ChatGPT agent')).toBeNull(); // its signature
    expect(unverifiedAllowWarning(UNKNOWN_CRAWLER)).toBeNull(); // a group, not a name anyone claims
    expect(unverifiedAllowWarning('Made-up-bot')).toBeNull();
    const unverified = BOT_CATALOGUE_ENTRIES.filter((entry) => unverifiedAllowWarning(entry.name) !== null);
    expect(unverified.every((entry) => !entry.ipRanges && !entry.signatureAgent && !entry.reverseDns)).toBe(true);
  });
});

describe('botPolicyInputProblems', () => {
  it('finds nothing wrong with an empty or a full policy', () => {
    expect(botPolicyInputProblems({})).toEqual([]);
    expect(
      botPolicyInputProblems({
        categories: { seo: 'block', 'ai-training': 'allow' },
        bots: { gptbot: 'charge', 'unknown-automation': 'block' },
        require_signature: { categories: ['ai-assistant'], bots: ['ChatGPT-User'] },
      }),
    ).toEqual([]);
  });

  it('locates every problem relative to the body', () => {
    expect(
      botPolicyInputProblems({
        categories: { seo: 'free', robots: 'block' },
        bots: {
          'GPT-Bot': 'block',
          GPTBot: 'deny',
          'Applebot-Extended': 'block',
          ClaudeBot: 'allow',
          claudebot: 'block',
        },
        require_signature: { categories: 'seo', bots: ['GPTBot', 42] },
      }).map(({ loc, type }) => [loc.join('.'), type]),
    ).toEqual([
      ['categories.seo', 'enum'],
      ['categories.robots', 'enum'],
      ['bots.GPT-Bot', 'bot_name'],
      ['bots.GPTBot', 'enum'],
      ['bots.Applebot-Extended', 'bot_robots_txt_only'],
      ['bots.claudebot', 'bot_duplicate'],
      ['require_signature.categories', 'list_type'],
      ['require_signature.bots.1', 'string_type'],
    ]);
  });

  it('refuses the wrong shapes and more than the cap, before looking at entries', () => {
    expect(botPolicyInputProblems(null)).toEqual([expect.objectContaining({ loc: [], type: 'dict_type' })]);
    expect(botPolicyInputProblems({ bots: [] })).toEqual([
      expect.objectContaining({ loc: ['bots'], type: 'dict_type' }),
    ]);
    const many = Object.fromEntries(Array.from({ length: MAX_POLICY_BOTS + 1 }, (_, i) => [`x${i}`, 'block']));
    expect(botPolicyInputProblems({ bots: many })).toEqual([
      expect.objectContaining({ loc: ['bots'], type: 'too_long', ctx: { max_length: MAX_POLICY_BOTS } }),
    ]);
  });

  it('says what is allowed', () => {
    expect(botActionProblem('deny', ['action'])).toEqual({
      loc: ['action'],
      msg: '"deny" is not an action: use "allow", "charge", "block"',
      type: 'enum',
      input: 'deny',
      ctx: { expected: ['allow', 'charge', 'block'] },
    });
    expect(botActionProblem('block', ['action'])).toBeNull();
    expect(botNameProblem('ClaudeBot', ['name'])).toBeNull();
  });
});

describe('normalizeBotPolicy', () => {
  it('stores names in the catalogue spelling, and categories, bots and lists in catalogue order without repeats', () => {
    const stored = normalizeBotPolicy({
      categories: { automation: 'block', 'ai-training': 'allow' },
      bots: { 'unknown-crawler': 'allow', googlebot: 'block', gptbot: 'charge' },
      require_signature: {
        categories: ['seo', 'ai-assistant', 'seo'],
        bots: ['perplexitybot', 'ChatGPT-User', 'chatgpt-user'],
      },
    });
    expect(stored).toEqual({
      categories: { 'ai-training': 'allow', automation: 'block' },
      bots: { GPTBot: 'charge', Googlebot: 'block', 'unknown-crawler': 'allow' },
      require_signature: { categories: ['ai-assistant', 'seo'], bots: ['ChatGPT-User', 'PerplexityBot'] },
    });
    expect(Object.keys(stored.bots)).toEqual(['GPTBot', 'Googlebot', 'unknown-crawler']);
    expect(normalizeBotPolicy({})).toEqual({
      categories: {},
      bots: {},
      require_signature: { categories: [], bots: [] },
    });
  });

  it('keeps, last, a name a newer catalogue dropped (a policy stored before)', () => {
    expect(Object.keys(normalizeBotPolicy({ bots: { RetiredBot: 'block', GPTBot: 'allow' } }).bots)).toEqual([
      'GPTBot',
      'RetiredBot',
    ]);
  });
});
