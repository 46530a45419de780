import { BOT_CATALOGUE_ENTRIES } from '@crawlgate/core';
import { canonicalCount, canonicalPathCrawler, foldedName, knownCrawler } from './reported-names';

const count = (crawler: string, extra: Record<string, unknown> = {}) => ({
  day: '2026-11-30',
  crawler,
  category: 'search-engine',
  operator: 'Somebody',
  action: 'charged' as const,
  verified: false,
  requests: 1,
  revenue_micros: '0',
  ...extra,
});

describe('reported crawler names', () => {
  it('tells every catalogue name and group apart once case, width and spaces are folded', () => {
    const names = [
      ...BOT_CATALOGUE_ENTRIES.map((entry) => entry.name),
      'person',
      'unknown-crawler',
      'unknown-automation',
      'unlisted agent',
      'other crawlers',
    ];
    expect(new Set(names.map(foldedName)).size).toBe(names.length);
    for (const name of names) expect(knownCrawler(name)?.name).toBe(name);
  });

  it('stores a known crawler under the catalogue spelling, operator and category', () => {
    for (const spelled of ['gptbot', 'GPTBOT', ' GPTBot ', '\uff27\uff30\uff34\uff22\uff4f\uff54'])
      expect(canonicalCount(count(spelled))).toEqual(count('GPTBot', { category: 'ai-training', operator: 'OpenAI' }));
    expect(canonicalCount(count('Unknown-Automation'))).toEqual(
      count('unknown-automation', { category: 'automation', operator: null }),
    );
    expect(canonicalCount(count('OTHER  crawlers')).crawler).toBe('other crawlers');
    expect(canonicalPathCrawler({ crawler: 'claudebot', path: '/a' })).toEqual({ crawler: 'ClaudeBot', path: '/a' });
  });

  it('leaves a name outside the catalogue as reported, look-alike letters of other scripts included', () => {
    // Greek omicron: not a compatibility form of "o", so not GPTBot; such names are capped per site and day.
    for (const name of ['NewBot', 'GPTB\u03bft', 'GPTBot2']) {
      expect(knownCrawler(name)).toBeUndefined();
      expect(canonicalCount(count(name))).toEqual(count(name));
    }
  });
});
