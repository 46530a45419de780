/*
 * Who is asking: a person, or which bot. Only the User-Agent is read, so this is identification,
 * not verification: a scraper can claim to be a browser, and one that claims to be Googlebot is
 * treated as Googlebot. The failure we refuse is the other one: a person must never be charged,
 * so everything that matches no signature and no crawler hint is human.
 */

import { ANY_CATALOGUED_BOT, BOT_CATALOGUE } from './catalogue';
import { resolveBotAction, UNKNOWN_AUTOMATION, UNKNOWN_CRAWLER } from './policy';
import type { BotCategory, BotPolicy, Visitor } from './types';

/** Real User-Agents stay under a few hundred characters; the cap bounds regex work on hostile headers. */
const MAX_USER_AGENT_LENGTH = 1024;

/**
 * A crawler that is in no catalogue but says what it is: a word ending in bot, crawler, spider,
 * scraper or fetcher, followed by a version, ";" or ")" ("(compatible; FooBot/1.0; …)"), or
 * contact details, which browsers never send ("+https://example.com/bot.html", "bot@example.com").
 * The lookbehind lets a word match start only at the word's start, which keeps this linear.
 */
const SELF_DECLARED_CRAWLER =
  /(?<![a-z0-9._-])[a-z0-9._-]*(?:bot|crawler|spider|scraper|fetcher)(?:[/;)]|$)|https?:\/\/|mailto:|@[a-z0-9-]+\.[a-z]{2,}/i;

/**
 * One case-insensitive pass that says whether a User-Agent is any bot at all: a catalogue
 * signature or a self-declared crawler. Most requests come from people, and for them this one
 * scan is all the work; only a match pays for finding which signature comes first.
 */
const ANY_BOT = new RegExp(`${ANY_CATALOGUED_BOT.source}|${SELF_DECLARED_CRAWLER.source}`, 'i');

/**
 * What identify() said of recent User-Agents. A site sees few distinct ones, each again and again
 * (a crawler's, the common browsers'), so most requests are a lookup. Bounded: a client inventing
 * User-Agents only empties it and pays the scan each time.
 */
const identified = new Map<string, Identity | null>();
const MAX_IDENTIFIED = 512;

type Identity = { readonly name: string; readonly category: BotCategory };

/** Classifies a request by its User-Agent header and applies the site's policy to bots. */
export function classifyVisitor(userAgent: string | undefined, policy?: BotPolicy): Visitor {
  const found = identify(userAgent);
  if (!found) return { kind: 'human' };
  return {
    kind: 'bot',
    name: found.name,
    category: found.category,
    action: resolveBotAction(found.name, found.category, policy),
  };
}

/**
 * The last few User-Agents found to be people's. A browser's is one of a few exact strings (browsers
 * reduced theirs to a version and a platform), and comparing a new request's string with one of these
 * skips hashing it, which a lookup in `identified` must do first: the bulk of a person's cost on a
 * fast route (tools/bench). Only strings identify() called human enter, so a match is that answer.
 */
const recentPeople: string[] = [];
const RECENT_PEOPLE = 4;
let nextRecentPerson = 0;

/** Whether a User-Agent is a person's: what classifyVisitor() calls human. */
export function isPersonUserAgent(userAgent: string | undefined): boolean {
  if (typeof userAgent !== 'string') return identify(userAgent) === null;
  for (let i = 0; i < recentPeople.length; i++) if (recentPeople[i] === userAgent) return true;
  if (identify(userAgent) !== null) return false;
  recentPeople[nextRecentPerson] = userAgent;
  nextRecentPerson = (nextRecentPerson + 1) % RECENT_PEOPLE;
  return true;
}

function identify(userAgent: string | undefined): Identity | null {
  // No browser sends one past a kilobyte: read only so far, a bot's name after it would pass for a person's.
  if (typeof userAgent === 'string' && userAgent.length > MAX_USER_AGENT_LENGTH) return UNKNOWN;
  const ua = typeof userAgent === 'string' ? userAgent.trim() : '';
  // Every browser sends a User-Agent; its absence is a script.
  if (ua === '') return UNKNOWN;
  let found = identified.get(ua);
  if (found === undefined) {
    found = scan(ua);
    if (identified.size >= MAX_IDENTIFIED) identified.clear();
    identified.set(ua, found);
  }
  return found;
}

const UNKNOWN: Identity = Object.freeze({ name: UNKNOWN_AUTOMATION, category: 'automation' });
const CRAWLER: Identity = Object.freeze({ name: UNKNOWN_CRAWLER, category: 'automation' });

function scan(ua: string): Identity | null {
  if (!ANY_BOT.test(ua)) return null;
  // The first signature in the catalogue's order names the bot, wherever in the text it matched.
  for (const bot of BOT_CATALOGUE) {
    if (bot.pattern.test(ua)) return Object.freeze({ name: bot.name, category: bot.category });
  }
  return SELF_DECLARED_CRAWLER.test(ua) ? CRAWLER : null;
}
