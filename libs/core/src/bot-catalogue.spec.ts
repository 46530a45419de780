import { BOT_CATALOGUE_ENTRIES, isUnnamedCrawler, UNKNOWN_AUTOMATION, UNKNOWN_CRAWLER } from './bot-catalogue';

describe('isUnnamedCrawler', () => {
  it('names the two groups of visitors no entry names, and no catalogued crawler', () => {
    expect(isUnnamedCrawler(UNKNOWN_AUTOMATION)).toBe(true);
    expect(isUnnamedCrawler(UNKNOWN_CRAWLER)).toBe(true);
    expect(BOT_CATALOGUE_ENTRIES.filter((entry) => isUnnamedCrawler(entry.name))).toEqual([]);
    expect(isUnnamedCrawler('Unknown-Automation')).toBe(false); // names are the classifier's, in its case
  });
});
