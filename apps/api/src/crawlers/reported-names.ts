/*
 * The names a crawler report may use, as the API stores them. A middleware names its catalogue's
 * bots and a few groups; a report spelling one of those another way (case, full-width letters,
 * spaces) is the same crawler, stored under the catalogue's spelling with the catalogue's operator
 * and category, so the dashboard's one-click action and the crawler's row name the same policy key.
 */

import {
  BOT_CATALOGUE_ENTRIES,
  OTHER_CRAWLERS,
  PERSON,
  UNKNOWN_AUTOMATION,
  UNKNOWN_CRAWLER,
  UNLISTED_AGENT,
  type CrawlerCount,
} from '@crawlgate/core';

export interface KnownCrawler {
  name: string;
  category: string;
  operator: string | null;
}

/** A name as compared: compatibility forms folded (full-width letters, the Kelvin sign), then case and runs of spaces. */
export const foldedName = (name: string): string => name.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();

const GROUPS: KnownCrawler[] = [
  { name: PERSON, category: 'person', operator: null },
  { name: UNKNOWN_CRAWLER, category: 'automation', operator: null },
  { name: UNKNOWN_AUTOMATION, category: 'automation', operator: null },
  { name: UNLISTED_AGENT, category: 'automation', operator: null },
  { name: OTHER_CRAWLERS, category: OTHER_CRAWLERS, operator: null },
];

const KNOWN = new Map<string, KnownCrawler>(
  [...BOT_CATALOGUE_ENTRIES, ...GROUPS].map(({ name, category, operator }) => [
    foldedName(name),
    { name, category, operator },
  ]),
);

/** The catalogue's crawler or the group a reported name spells; undefined for a name outside them. */
export const knownCrawler = (name: string): KnownCrawler | undefined => KNOWN.get(foldedName(name));

/**
 * Whether the view shows a name's verified requests: a catalogue crawler's, or those the middleware
 * verified for a group of its own (a signer it cannot name is unknown-automation). Not a name outside
 * them, whose report could claim anything (a look-alike of GPTBot with a Greek omicron would read as
 * GPTBot, verified), nor OTHER_CRAWLERS, where the API folds such names.
 */
export const vouchedName = (name: string): boolean => {
  const known = knownCrawler(name);
  return known !== undefined && known.name !== OTHER_CRAWLERS;
};

/** A reported count of a known crawler under its own spelling, operator and category; any other as reported. */
export function canonicalCount<C extends CrawlerCount>(count: C): C {
  const known = knownCrawler(count.crawler);
  return known ? { ...count, crawler: known.name, category: known.category, operator: known.operator } : count;
}

/** A reported path count under its crawler's own spelling. */
export function canonicalPathCrawler<P extends { crawler: string }>(path: P): P {
  const known = knownCrawler(path.crawler);
  return known ? { ...path, crawler: known.name } : path;
}
