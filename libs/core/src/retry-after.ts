/** An HTTP-date starts with its day's name (IMF-fixdate, and the obsolete RFC 850 and asctime forms). */
const HTTP_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /;

/**
 * Retry-After as seconds (RFC 9110: delay-seconds, or an HTTP-date, a past one meaning now).
 * Undefined when absent or unreadable, so each caller picks its own default; 0 means at once.
 * Only a date spelled as HTTP spells one: Date.parse reads "-5" or "1.5" as dates long past.
 */
export function parseRetryAfter(header: string | null | undefined, now = Date.now()): number | undefined {
  const text = header?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text);
  const date = HTTP_DATE.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
