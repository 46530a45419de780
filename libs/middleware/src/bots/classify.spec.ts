import { ANY_CATALOGUED_BOT, BOT_CATALOGUE } from './catalogue';
import { classifyVisitor, isPersonUserAgent } from './classify';
import { resolveBotAction, UNKNOWN_AUTOMATION, UNKNOWN_CRAWLER } from './policy';
import type { BotCategory, BotPolicy, Visitor } from './types';
import { BOT_USER_AGENTS, BROWSER_USER_AGENTS } from './user-agents.test-data';

describe('classifyVisitor', () => {
  it.each(BOT_USER_AGENTS)('%s → %s (%s)', (ua, name, category) => {
    expect(classifyVisitor(ua)).toMatchObject({ kind: 'bot', name, category });
  });

  it.each(BROWSER_USER_AGENTS)('%s is a person (%s)', (ua) => {
    expect(classifyVisitor(ua)).toEqual({ kind: 'human' });
  });

  it.each([[undefined], [''], ['   ']])('a missing or blank User-Agent (%p) is unknown automation', (ua) => {
    expect(classifyVisitor(ua)).toEqual({
      kind: 'bot',
      name: 'unknown-automation',
      category: 'automation',
      action: 'charge',
    });
  });

  it('matches tokens in any case, but only whole', () => {
    expect(classifyVisitor('mozilla/5.0 (compatible; gptbot/1.2)')).toMatchObject({ name: 'GPTBot' });
    expect(classifyVisitor('MOZILLA/5.0 (COMPATIBLE; CLAUDEBOT/1.0)')).toMatchObject({ name: 'ClaudeBot' });
    // "curl" inside a word, "node" inside a sentence and "Java/" past the start are not the tools.
    for (const ua of [
      'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0.0.0 Safari/537.36 Curlew/1.0',
      'Mozilla/5.0 node Firefox/133.0',
      'Mozilla/5.0 Java/17 Firefox/133.0',
    ]) {
      expect(classifyVisitor(ua)).toEqual({ kind: 'human' });
    }
  });

  it('prefers the more specific of two tokens in one User-Agent', () => {
    expect(classifyVisitor('Mozilla/5.0 (compatible; Googlebot-Video/1.0)')).toMatchObject({ name: 'Googlebot-Video' });
    expect(classifyVisitor('Mozilla/5.0 (compatible; Googlebot-Mobile/2.1)')).toMatchObject({ name: 'Googlebot' });
    expect(classifyVisitor('Mozilla/5.0 (compatible; Applebot-Extended/0.1)')).toMatchObject({
      name: 'Applebot-Extended',
      category: 'ai-training',
    });
    expect(classifyVisitor('Mozilla/5.0 (compatible; SemrushBot-OCOB/1.0)')).toMatchObject({
      name: 'SemrushBot-OCOB',
      category: 'ai-assistant',
    });
  });

  it('takes a User-Agent past a kilobyte for automation, unread, so hostile headers stay cheap', () => {
    // Read only so far, a bot's name past the first kilobyte passed for a person's: no browser sends one so long.
    const automation = { kind: 'bot', name: 'unknown-automation', category: 'automation', action: 'charge' };
    expect(classifyVisitor('a'.repeat(1_000_000))).toEqual(automation);
    expect(classifyVisitor(`Mozilla/5.0 ${'a'.repeat(1_100)} GPTBot/1.1`)).toEqual(automation);
    expect(classifyVisitor(`Mozilla/5.0 ${'a'.repeat(1_000)}`)).toEqual({ kind: 'human' });
  });

  it('has a prefilter that agrees with the signatures one by one', () => {
    const uas = [
      ...BOT_USER_AGENTS.map(([ua]) => ua),
      ...BROWSER_USER_AGENTS.map(([ua]) => ua),
      ...BOT_CATALOGUE.map((bot) => bot.name),
    ];
    for (const ua of uas)
      expect([ua, ANY_CATALOGUED_BOT.test(ua)]).toEqual([ua, BOT_CATALOGUE.some((bot) => bot.pattern.test(ua))]);
  });

  it('answers as the classifier before the one-pass regex and the memo did, for every known bot, browser and near miss', () => {
    const browsers = BROWSER_USER_AGENTS.map(([ua]) => ua);
    const uas = [
      ...BOT_USER_AGENTS.map(([ua]) => ua),
      ...browsers,
      ...BOT_CATALOGUE.flatMap((bot) => [
        bot.name,
        bot.name.toUpperCase(),
        `${browsers[0]} ${bot.name}/1.0`,
        `Mozilla/5.0 (compatible; x${bot.name}y)`,
      ]),
      'Mozilla/5.0 (compatible; FooBot/1.0)',
      'foo-crawler',
      'my_spider;',
      'Scraper)',
      'see https://example.com',
      'mailto:me',
      'me@example.org',
      'curl/8.4.0',
      'python-requests/2.32',
      'Mozilla/5.0 Curlew/1.0',
      'robot',
      'abot',
      'Mozilla/5.0 (Linux; Android 14) Mobile Safari/537.36 LinkedInBot/1.0',
      '',
      '   ',
    ];
    const policies: (BotPolicy | undefined)[] = [
      undefined,
      { categories: { seo: 'block', 'ai-training': 'allow' }, bots: { googlebot: 'charge' } },
    ];
    for (const policy of policies) {
      // Twice: the second answer comes from the memo.
      for (const ua of [...uas, ...uas])
        expect([ua, classifyVisitor(ua, policy)]).toEqual([ua, classifiedBefore(ua, policy)]);
    }
  });
});

/** classifyVisitor as it was: the catalogue prefilter, then the self-declared pattern, as two scans. */
function classifiedBefore(userAgent: string | undefined, policy?: BotPolicy): Visitor {
  const selfDeclared =
    /(?<![a-z0-9._-])[a-z0-9._-]*(?:bot|crawler|spider|scraper|fetcher)(?:[/;)]|$)|https?:\/\/|mailto:|@[a-z0-9-]+\.[a-z]{2,}/i;
  const ua = typeof userAgent === 'string' ? userAgent.slice(0, 1024).trim() : '';
  let found: { name: string; category: BotCategory } | null = null;
  if (ua === '') found = { name: UNKNOWN_AUTOMATION, category: 'automation' };
  else if (ANY_CATALOGUED_BOT.test(ua)) found = BOT_CATALOGUE.find((bot) => bot.pattern.test(ua)) ?? null;
  if (!found && ua !== '' && selfDeclared.test(ua)) found = { name: UNKNOWN_CRAWLER, category: 'automation' };
  if (!found) return { kind: 'human' };
  return {
    kind: 'bot',
    name: found.name,
    category: found.category,
    action: resolveBotAction(found.name, found.category, policy),
  };
}

describe('isPersonUserAgent', () => {
  // A fresh copy of a string, as each request brings its own: compared, not the same object.
  const fresh = (text: string) => Buffer.from(text).toString();

  it('says what classifyVisitor says, asked again and again in any order, browsers and bots mixed', () => {
    const userAgents = [...BROWSER_USER_AGENTS, ...BOT_USER_AGENTS].map(([userAgent]) => userAgent).concat(['', ' ']);
    for (let round = 0; round < 3; round++)
      for (let index = 0; index < userAgents.length; index++) {
        const asked = userAgents[(index * 7 + round) % userAgents.length];
        const expected = classifyVisitor(asked).kind === 'human';
        expect([asked, isPersonUserAgent(fresh(asked))]).toEqual([asked, expected]);
        expect([asked, isPersonUserAgent(asked)]).toEqual([asked, expected]);
      }
  });

  it('never remembers a bot among the people: a bot’s string asked right after is still a bot', () => {
    const [browser] = BROWSER_USER_AGENTS[0];
    const bot = `${browser} ExampleBot/1.0`;
    expect(isPersonUserAgent(browser)).toBe(true);
    expect(isPersonUserAgent(bot)).toBe(false);
    expect(isPersonUserAgent(fresh(bot))).toBe(false);
    // A person's string one character off is looked up, not taken for the one remembered.
    expect(isPersonUserAgent(`${browser.slice(0, -1)}X`)).toBe(true);
    expect(isPersonUserAgent(`${browser}Bot/1`)).toBe(false);
  });

  it('answers a remembered person’s string padded, grown past a kilobyte, or not a string as it always did', () => {
    const [browser] = BROWSER_USER_AGENTS[1];
    expect(isPersonUserAgent(browser)).toBe(true);
    expect(isPersonUserAgent(` ${browser} `)).toBe(true);
    expect(isPersonUserAgent(`${browser}${' '.repeat(1024)}GPTBot/1.0`)).toBe(false);
    expect(isPersonUserAgent(`${browser} ${'x'.repeat(1024)}`)).toBe(false);
    expect(isPersonUserAgent(undefined)).toBe(false);
    expect(isPersonUserAgent([browser] as unknown as string)).toBe(false);
    expect(isPersonUserAgent(browser)).toBe(true);
  });
});
