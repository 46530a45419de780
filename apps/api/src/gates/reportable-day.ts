/*
 * Which UTC days a middleware's batched report (gate counts, crawler counts) may name: the
 * middleware stamps each entry with its own clock's day, and sends the batch up to an interval later.
 */

const DAY_MS = 86_400_000;

/** Today and the two days before: a batch sent after midnight names the day before. */
export const REPORTABLE_DAYS = 3;

/** How far ahead of ours a middleware's clock may be: near midnight it names tomorrow already. */
export const CLOCK_AHEAD_MS = 5 * 60_000;

/** A real UTC date (YYYY-MM-DD): today, one of the days before, or tomorrow in today's last CLOCK_AHEAD_MS. */
export function isReportableDay(day: string, now = new Date()): boolean {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const at = Date.parse(`${day}T00:00:00Z`);
  const real = !Number.isNaN(at) && new Date(at).toISOString().slice(0, 10) === day;
  const latest = now.getTime() + CLOCK_AHEAD_MS >= today + DAY_MS ? today + DAY_MS : today;
  return real && at <= latest && at > today - REPORTABLE_DAYS * DAY_MS;
}
