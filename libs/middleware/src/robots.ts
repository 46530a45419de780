/*
 * robots.txt with the site's licensing and usage signals: RSL's global `License: <absolute URL>`
 * line, and in the `User-agent: *` group Cloudflare's `Content-Signal: search=yes, ai-input=yes,
 * ai-train=no` and IETF AIPREF's `Content-Usage: search=y, train-ai=n` (the vocabulary's labels).
 * The publisher's own rules are kept as they are: the lines are added, never rewritten.
 */

import type { UsagePreferences } from './license';

export interface RobotsTxtSignals {
  /** The RSL license's absolute URL (Licensing.url()); omitted: no License line. */
  licenseUrl?: string;
  usage?: UsagePreferences;
}

/** RFC 9309: crawlers must read at least 500 KiB; a longer file is cut where they stop reading. */
export const MAX_ROBOTS_TXT_BYTES = 500 * 1024;

const CONTENT_SIGNAL: Record<keyof UsagePreferences, string> = {
  search: 'search',
  aiInput: 'ai-input',
  aiTrain: 'ai-train',
};
const CONTENT_USAGE: Record<keyof UsagePreferences, string> = {
  search: 'search',
  aiInput: 'ai-use',
  aiTrain: 'train-ai',
};
const SIGNAL_LINE = /^\s*(?:content-signal|content-usage)\s*:/im;

/**
 * The publisher's robots.txt (`base`, '' for none) with the License line first and the usage lines
 * in its `User-agent: *` group (a new group at the end when it has none). Throws a TypeError for a
 * base that already states Content-Signal or Content-Usage (two statements would contradict), a
 * license URL that is not an absolute http(s) URL on one line, or a base over 500 KiB.
 */
export function robotsTxt(base: string, signals: RobotsTxtSignals): string {
  if (typeof base !== 'string') throw new TypeError('robotsTxt: base must be the robots.txt text ("" for none)');
  if (new TextEncoder().encode(base).length > MAX_ROBOTS_TXT_BYTES)
    throw new TypeError('robotsTxt: base is over 500 KiB, past where crawlers stop reading');
  const { licenseUrl, usage = {} } = signals;
  if (licenseUrl !== undefined && !isAbsoluteHttpUrl(licenseUrl))
    throw new TypeError('robotsTxt: licenseUrl must be an absolute http(s) URL');
  const usageLines = usageDirectives(usage);
  if (usageLines.length > 0 && SIGNAL_LINE.test(base))
    throw new TypeError('robotsTxt: base already has Content-Signal or Content-Usage lines; set them in one place');

  const lines = base.replace(/\r\n?/g, '\n').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (usageLines.length > 0) {
    const group = lines.findIndex((line) => /^\s*user-agent\s*:\s*\*\s*(?:#.*)?$/i.test(line));
    if (group < 0) {
      lines.push(...(lines.length > 0 ? [''] : []), 'User-agent: *', ...usageLines);
    } else {
      // After the group's run of User-agent lines: the group's rules follow them.
      let end = group + 1;
      while (end < lines.length && /^\s*user-agent\s*:/i.test(lines[end])) end++;
      lines.splice(end, 0, ...usageLines);
    }
  }
  const hasLicense =
    licenseUrl !== undefined &&
    lines.some((line) => line.trim().toLowerCase() === `license: ${licenseUrl}`.toLowerCase());
  if (licenseUrl !== undefined && !hasLicense) lines.unshift(`License: ${licenseUrl}`, '');
  return lines.join('\n') + '\n';
}

function usageDirectives(usage: UsagePreferences): string[] {
  const keys = (Object.keys(CONTENT_SIGNAL) as (keyof UsagePreferences)[]).filter(
    (key) => typeof usage[key] === 'boolean',
  );
  if (keys.length === 0) return [];
  return [
    `Content-Signal: ${keys.map((key) => `${CONTENT_SIGNAL[key]}=${usage[key] ? 'yes' : 'no'}`).join(', ')}`,
    `Content-Usage: ${keys.map((key) => `${CONTENT_USAGE[key]}=${usage[key] ? 'y' : 'n'}`).join(', ')}`,
  ];
}

function isAbsoluteHttpUrl(text: unknown): boolean {
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  if (typeof text !== 'string' || /[\s\u0000-\u001f\u007f]/.test(text)) return false;
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}
