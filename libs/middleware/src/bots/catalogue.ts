/*
 * Known crawlers by User-Agent: the catalogue of @crawlgate/core (bot-catalogue.ts: names,
 * categories, operators, tokens, in priority order), compiled into the patterns the classifier
 * tests. Adding a crawler is done there; run bots/*.spec.ts after.
 */

import { BOT_CATALOGUE_ENTRIES, type BotCatalogueEntry } from '@crawlgate/core';
import type { BotSignature } from './types';

/** No letter or digit may touch a token: "-", "/", ";", "_" and spaces are boundaries. */
function tokenPattern(source: string): RegExp {
  return new RegExp(`(?<![a-z0-9])(?:${source})(?![a-z0-9])`, 'i');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** An entry's pattern: its own RegExp, or the source of a token (which the prefilter below shares). */
function patternOf(entry: BotCatalogueEntry): RegExp | string {
  return entry.match instanceof RegExp ? entry.match : (entry.match ?? escapeRegExp(entry.name));
}

// A signed-only crawler sends a browser's User-Agent: no pattern can name it (web-bot-auth/ does).
const ROWS = BOT_CATALOGUE_ENTRIES.filter((entry) => !entry.signedOnly).map((entry) => ({
  entry,
  pattern: patternOf(entry),
}));

export const BOT_CATALOGUE: readonly BotSignature[] = Object.freeze(
  ROWS.map(({ entry: { match: _match, ...rest }, pattern }) =>
    Object.freeze({ ...rest, pattern: typeof pattern === 'string' ? tokenPattern(pattern) : pattern }),
  ),
);

/**
 * True when some signature matches: the same union as testing each one, with the token boundary
 * written once, which makes the common case (a browser, no match) about three times faster.
 */
export const ANY_CATALOGUED_BOT: RegExp = new RegExp(
  [
    tokenPattern(ROWS.flatMap(({ pattern }) => (typeof pattern === 'string' ? [pattern] : [])).join('|')).source,
    ...ROWS.flatMap(({ pattern }) => (typeof pattern === 'string' ? [] : [pattern.source])),
  ].join('|'),
  'i',
);
