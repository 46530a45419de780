import { DEFAULT_CATEGORY_ACTIONS, type SiteBotPolicy } from '@crawlgate/core';
import { allowNote, describeSource, effectiveAction, groupNote, noActionNote } from './bot-actions';

const policy = (changes: Partial<SiteBotPolicy> = {}): SiteBotPolicy => ({
  site_id: 's',
  categories: {},
  bots: {},
  require_signature: { categories: [], bots: [] },
  defaults: { ...DEFAULT_CATEGORY_ACTIONS },
  version: 0,
  updated_at: null,
  ...changes,
});

const gptBot = { crawler: 'GPTBot', category: 'ai-training' };
const googlebot = { crawler: 'Googlebot', category: 'search-engine' };

describe('effectiveAction', () => {
  it('takes the default when nothing is set', () => {
    expect(effectiveAction(gptBot, policy())).toEqual({ action: 'charge', source: 'default' });
    expect(effectiveAction(googlebot, policy())).toEqual({ action: 'allow', source: 'default' });
    expect(effectiveAction({ crawler: 'unknown-crawler', category: 'automation' }, policy())).toEqual({
      action: 'charge',
      source: 'default',
    });
  });

  it('takes the category’s action over the default, and the crawler’s own over both', () => {
    const rules = policy({
      categories: { 'ai-training': 'block', 'search-engine': 'charge' },
      bots: { GPTBot: 'allow' },
    });
    expect(effectiveAction(gptBot, rules)).toEqual({ action: 'allow', source: 'bot' });
    expect(effectiveAction(googlebot, rules)).toEqual({ action: 'charge', source: 'category' });
    expect(effectiveAction({ crawler: 'ClaudeBot', category: 'ai-training' }, rules)).toEqual({
      action: 'block',
      source: 'category',
    });
  });

  it('matches the crawler’s name in any case, as the middleware does', () => {
    expect(
      effectiveAction({ crawler: 'gptbot', category: 'ai-training' }, policy({ bots: { GPTBot: 'block' } })),
    ).toEqual({ action: 'block', source: 'bot' });
  });

  it('has nothing for a name no policy can hold: people, the unlisted agents the middleware always charges, names outside the catalogue', () => {
    // PUT …/bot-policy/bots/{name} answers 422 for each: a button there could only fail.
    const blocked = policy({ categories: { automation: 'block', 'ai-training': 'block' } });
    expect(effectiveAction({ crawler: 'person', category: 'person' }, blocked)).toBeNull();
    expect(effectiveAction({ crawler: 'unlisted agent', category: 'automation' }, blocked)).toBeNull();
    expect(effectiveAction({ crawler: 'other crawlers', category: 'other crawlers' }, blocked)).toBeNull();
    expect(effectiveAction({ crawler: 'GPTB\u03bft', category: 'ai-training' }, blocked)).toBeNull(); // Greek omicron
    expect(effectiveAction({ crawler: 'NewBot', category: 'ai-future' }, policy())).toBeNull();
    expect(effectiveAction({ crawler: 'constructor', category: 'automation' }, policy())).toBeNull();
    // A robots.txt-only token of the catalogue: PUT answers 422 bot_robots_txt_only.
    expect(effectiveAction({ crawler: 'Google-Extended', category: 'ai-training' }, blocked)).toBeNull();
    expect(effectiveAction({ crawler: 'Applebot-Extended', category: 'ai-training' }, policy())).toBeNull();
  });

  it('has nothing for a catalogue crawler in a category it does not know, unless the crawler has its own action', () => {
    expect(effectiveAction({ crawler: 'GPTBot', category: 'ai-future' }, policy())).toBeNull();
    expect(
      effectiveAction({ crawler: 'GPTBot', category: 'ai-future' }, policy({ bots: { GPTBot: 'block' } })),
    ).toEqual({ action: 'block', source: 'bot' });
  });

  it('does not take an inherited property for an action', () => {
    const inherited = Object.create({ GPTBot: 'block' }) as Record<string, 'block'>;
    expect(effectiveAction(gptBot, policy({ bots: inherited }))).toEqual({ action: 'charge', source: 'default' });
  });
});

describe('describeSource', () => {
  it('says where the action comes from', () => {
    expect(describeSource({ action: 'block', source: 'bot' }, 'seo')).toBe('set for this crawler');
    expect(describeSource({ action: 'block', source: 'category' }, 'seo')).toBe('by category seo');
    expect(describeSource({ action: 'allow', source: 'default' }, 'seo')).toBe('default for seo');
  });
});

describe('groupNote', () => {
  it('warns that an action on a group reaches every agent in it, and says nothing of a named crawler', () => {
    expect(groupNote('unknown-automation')).toMatch(/all of them/);
    expect(groupNote('unknown-crawler')).toMatch(/all of them/);
    expect(groupNote('GPTBot')).toBeNull();
  });
});

describe('noActionNote', () => {
  it('says the unlisted agents are always charged, and shows a dash for any other row with no action', () => {
    expect(noActionNote('unlisted agent')).toBe('always charged');
    expect(noActionNote('person')).toBe('–');
    expect(noActionNote('GPTB\u03bft')).toBe('–');
    expect(noActionNote('Google-Extended')).toMatch(/robots\.txt token/);
  });
});

describe('allowNote', () => {
  it('warns only where an allowed crawler is taken on its name alone', () => {
    expect(allowNote('AhrefsBot', 'allow')).toMatch(/cannot verify AhrefsBot, so anyone who sends that User-Agent/);
    expect(allowNote('facebookexternalhit', 'allow')).toMatch(/name alone/);
    expect(allowNote('AhrefsBot', 'charge')).toBeNull();
    expect(allowNote('AhrefsBot', undefined)).toBeNull();
    expect(allowNote('Googlebot', 'allow')).toBeNull(); // verified by Google's published ranges
    expect(allowNote('ChatGPT agent', 'allow')).toBeNull(); // verified by its signature
    expect(allowNote('unknown-crawler', 'allow')).toBeNull(); // a group: groupNote speaks for it
  });
});
