import { classifyVisitor } from './classify';
import { botPolicyProblems, DEFAULT_CATEGORY_ACTIONS } from './policy';
import type { BotPolicy } from './types';

const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';
const CLAUDEBOT =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)';
const CHATGPT_USER =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const AHREFS = 'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)';
const TWITTER = 'Twitterbot/1.0';

const action = (ua: string | undefined, policy?: BotPolicy) => {
  const visitor = classifyVisitor(ua, policy);
  return visitor.kind === 'bot' ? visitor.action : 'human';
};

describe('bot policy', () => {
  it('charges AI, SEO tools and unknown automation, and lets search and social previews pass, by default', () => {
    expect(DEFAULT_CATEGORY_ACTIONS).toEqual({
      'ai-training': 'charge',
      'ai-assistant': 'charge',
      'ai-search': 'charge',
      'search-engine': 'allow',
      seo: 'charge',
      'social-preview': 'allow',
      automation: 'charge',
    });
    expect([GPTBOT, CHATGPT_USER, GOOGLEBOT, AHREFS, TWITTER, 'curl/8.4.0', undefined].map((ua) => action(ua))).toEqual(
      ['charge', 'charge', 'allow', 'charge', 'allow', 'charge', 'charge'],
    );
  });

  it('applies a category override to every bot of the category', () => {
    const policy: BotPolicy = { categories: { 'ai-training': 'allow', seo: 'block', 'social-preview': 'charge' } };
    expect([GPTBOT, CLAUDEBOT, CHATGPT_USER, AHREFS, TWITTER].map((ua) => action(ua, policy))).toEqual([
      'allow',
      'allow',
      'charge',
      'block',
      'charge',
    ]);
  });

  it('lets a per-bot override, in any case, win over its category', () => {
    const policy: BotPolicy = {
      categories: { 'ai-training': 'allow' },
      bots: { gptbot: 'block', GOOGLEBOT: 'charge', curl: 'allow' },
    };
    expect([GPTBOT, CLAUDEBOT, GOOGLEBOT, 'curl/8.4.0', 'Wget/1.21'].map((ua) => action(ua, policy))).toEqual([
      'block',
      'allow',
      'charge',
      'allow',
      'charge',
    ]);
  });

  it('ignores an entry for a robots.txt token: no crawler sends it, so whoever does is an impostor, judged by its category', () => {
    const policy: BotPolicy = {
      categories: { 'ai-training': 'block' },
      bots: { 'Google-Extended': 'allow', 'applebot-extended': 'allow' },
    };
    expect(
      ['Mozilla/5.0 (compatible; Googlebot/2.1) Google-Extended', 'Google-Extended', 'Applebot-Extended/0.1'].map(
        (ua) => action(ua, policy),
      ),
    ).toEqual(['block', 'block', 'block']);
    expect(action('Google-Extended', { bots: { 'Google-Extended': 'allow' } })).toBe(
      DEFAULT_CATEGORY_ACTIONS['ai-training'],
    );
  });

  it('prefers the exact spelling when two keys differ only in case', () => {
    expect(action(GPTBOT, { bots: { gptbot: 'allow', GPTBot: 'block' } })).toBe('block');
  });

  it('names visitors outside the catalogue so policies can address them', () => {
    const policy: BotPolicy = { bots: { 'unknown-automation': 'block', 'unknown-crawler': 'allow' } };
    expect([undefined, 'Mozilla/5.0 (compatible; NewBot/1.0)'].map((ua) => action(ua, policy))).toEqual([
      'block',
      'allow',
    ]);
  });

  it('never applies a policy to people', () => {
    expect(
      action('Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0', {
        categories: { automation: 'block' },
      }),
    ).toBe('human');
  });

  it('refuses an action that is not one of the three, rather than guess', () => {
    expect(() => classifyVisitor(GPTBOT, { bots: { GPTBot: 'deny' as never } })).toThrow(
      /policy.bots\["GPTBot"\] is "deny"/,
    );
    expect(() => classifyVisitor(GPTBOT, { categories: { 'ai-training': 'free' as never } })).toThrow(TypeError);
  });

  describe('botPolicyProblems', () => {
    it('finds nothing wrong with a good policy or none', () => {
      expect(botPolicyProblems(undefined)).toEqual([]);
      expect(
        botPolicyProblems({ categories: { seo: 'block' }, bots: { claudebot: 'allow', 'unknown-crawler': 'block' } }),
      ).toEqual([]);
    });

    it('reports typos, unknown names, bad actions and robots.txt-only tokens', () => {
      expect(
        botPolicyProblems({
          categories: { 'ai-train': 'allow', seo: 'deny' },
          bots: { 'GPT-Bot': 'allow', 'Google-Extended': 'block' },
          bot: {},
        }),
      ).toEqual([
        'policy.bot is not an option: use "categories", "bots" and "requireSignature"',
        'policy.categories["ai-train"]: no such category (ai-training, ai-assistant, ai-search, search-engine, seo, social-preview, automation)',
        'policy.categories["seo"] is "deny": use "allow", "charge" or "block"',
        'policy.bots["GPT-Bot"]: no bot of that name in the catalogue',
        'policy.bots["Google-Extended"]: Google-Extended is a robots.txt token that no crawler sends as its User-Agent (whoever does is an impostor), so this entry is ignored',
      ]);
    });

    it('warns that requiring a signature of automation it allows frees every self-signed request', () => {
      // Anyone can publish a key directory: a signature from an origin the catalogue does not know says who signed, no more.
      const warning = expect.stringMatching(/anyone can publish a key directory/);
      for (const policy of [
        { categories: { automation: 'allow' }, requireSignature: { categories: ['automation'] } },
        { bots: { 'Unknown-Automation': 'allow' }, requireSignature: { bots: ['unknown-automation'] } },
        { categories: { automation: 'allow' }, requireSignature: { bots: ['UNKNOWN-AUTOMATION'] } },
      ] as const)
        expect(botPolicyProblems(policy)).toEqual([warning]);
      for (const policy of [
        { categories: { automation: 'charge' }, requireSignature: { categories: ['automation'] } },
        {
          categories: { automation: 'allow' },
          bots: { 'unknown-automation': 'charge' },
          requireSignature: { categories: ['automation'] },
        },
        { categories: { automation: 'allow' } },
        { requireSignature: { categories: ['automation'] } },
      ] as const)
        expect(botPolicyProblems(policy)).toEqual([]);
    });

    it('warns of it beside the policy’s other problems: a typo elsewhere does not hide it', () => {
      expect(
        botPolicyProblems({
          categories: { automation: 'allow', seo: 'deny' },
          bots: { 'GPT-Bot': 'block' },
          requireSignature: { categories: ['automation'] },
        } as never),
      ).toEqual([
        'policy.categories["seo"] is "deny": use "allow", "charge" or "block"',
        'policy.bots["GPT-Bot"]: no bot of that name in the catalogue',
        expect.stringMatching(/anyone can publish a key directory/),
      ]);
      // A requirement it cannot read at all is its own problem, and no false warning.
      expect(
        botPolicyProblems({ categories: { automation: 'allow' }, requireSignature: 'automation' } as never),
      ).toEqual(['policy.requireSignature must be an object with optional lists "categories" and "bots"']);
    });

    it('checks requireSignature: known categories and catalogue names, as lists', () => {
      expect(
        botPolicyProblems({
          requireSignature: { categories: ['ai-assistant'], bots: ['chatgpt-user', 'unknown-crawler'] },
        }),
      ).toEqual([]);
      expect(
        botPolicyProblems({
          requireSignature: { categories: ['ai-agents'], bots: ['GPT-Bot', 'Applebot-Extended', 7], verified: true },
        }),
      ).toEqual([
        'policy.requireSignature.verified is not an option: use "categories" and "bots"',
        'policy.requireSignature.categories: "ai-agents" is no category (ai-training, ai-assistant, ai-search, search-engine, seo, social-preview, automation)',
        'policy.requireSignature.bots["GPT-Bot"]: no bot of that name in the catalogue',
        'policy.requireSignature.bots["Applebot-Extended"]: Applebot-Extended is a robots.txt token that no crawler sends as its User-Agent (whoever does is an impostor), so this entry is ignored',
        'policy.requireSignature.bots["7"]: 7 is not a name',
      ]);
      expect(botPolicyProblems({ requireSignature: { categories: 'seo', bots: {} } })).toEqual([
        'policy.requireSignature.categories must be a list',
        'policy.requireSignature.bots must be a list',
      ]);
      expect(botPolicyProblems({ requireSignature: ['GPTBot'] })).toEqual([
        'policy.requireSignature must be an object with optional lists "categories" and "bots"',
      ]);
    });

    it('reports a policy of the wrong shape', () => {
      expect(botPolicyProblems('charge')).toEqual([
        'policy must be an object with optional "categories", "bots" and "requireSignature"',
      ]);
      expect(botPolicyProblems({ bots: [] })).toEqual(['policy.bots must be an object']);
    });
  });
});
