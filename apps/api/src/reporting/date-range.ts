import { applyDecorators } from '@nestjs/common';
import { ApiQuery, ApiResponse } from '@nestjs/swagger';
import { ValidationFailed, type ValidationItem } from '../http/validation-items';
import { queryProblem, queryText } from './query-params';

export const DEFAULT_RANGE_DAYS = 30;
/** A leap year, so "the last year" always fits. */
export const MAX_RANGE_DAYS = 366;

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

const DATE_QUERY = 'A date (YYYY-MM-DD) or an ISO 8601 date-time, taken as its UTC day.';

/** The OpenAPI of `?from=&to=` as parseDateRange reads them, and its 422. */
export const ApiRangeQueries = () =>
  applyDecorators(
    ApiQuery({
      name: 'from',
      required: false,
      schema: { type: 'string' },
      description: `${DATE_QUERY} Default: 29 days before to.`,
    }),
    ApiQuery({
      name: 'to',
      required: false,
      schema: { type: 'string' },
      description: `${DATE_QUERY} Included. Default: today (UTC). At most ${MAX_RANGE_DAYS} days after from.`,
    }),
    ApiResponse({
      status: 422,
      description: `Bad from or to, to before from, or a range over ${MAX_RANGE_DAYS} days.`,
    }),
  );

/** Whole UTC days, both ends included. */
export interface DateRange {
  from: string;
  to: string;
  /** First instant of `from` and first instant after `to`: the half-open interval to filter timestamps by. */
  start: Date;
  end: Date;
  /** Every day of the range, oldest first, as YYYY-MM-DD. */
  days: string[];
}

/**
 * Reads `?from=&to=`: dates (YYYY-MM-DD) or ISO 8601 date-times, which count as the UTC day they
 * fall on. Defaults: `to` today (UTC), `from` 29 days before `to`, so 30 days in all.
 */
export function parseDateRange(query: { from?: unknown; to?: unknown }, now = new Date()): DateRange {
  const problems: ValidationItem[] = [];
  const fromText = queryText('from', query.from, problems);
  const toText = queryText('to', query.to, problems);
  const from = fromText === undefined ? undefined : readDay('from', fromText, problems);
  const to = toText === undefined ? Math.floor(now.getTime() / DAY_MS) : readDay('to', toText, problems);
  if (problems.length > 0 || to === null || from === null) throw new ValidationFailed(problems);

  const first = from ?? to - (DEFAULT_RANGE_DAYS - 1);
  const blame = toText === undefined ? 'from' : 'to';
  const input = toText ?? fromText;
  if (first < FIRST_DAY) {
    // Only a defaulted from gets here (a given one is checked by readDay): year 0 has no date in the database.
    problems.push(
      queryProblem(
        'to',
        `from defaults to ${DEFAULT_RANGE_DAYS - 1} days before to, which falls before 0001-01-01: give from`,
        'range_start',
        toText,
      ),
    );
  } else if (to < first) {
    problems.push(
      queryProblem(blame, 'to must be the same day as from or later (to defaults to today, UTC)', 'date_order', input),
    );
  } else if (to - first + 1 > MAX_RANGE_DAYS) {
    problems.push(
      queryProblem(blame, `The range may span at most ${MAX_RANGE_DAYS} days`, 'range_too_long', input, {
        max_days: MAX_RANGE_DAYS,
      }),
    );
  }
  if (problems.length > 0) throw new ValidationFailed(problems);

  const days = Array.from({ length: to - first + 1 }, (_, i) => formatDay(first + i));
  return {
    from: days[0],
    to: days[days.length - 1],
    start: new Date(first * DAY_MS),
    end: new Date((to + 1) * DAY_MS),
    days,
  };
}

/** Days since 1970-01-01 (UTC), or null after recording why the text is not a date. */
function readDay(name: string, text: string, problems: ValidationItem[]): number | null {
  const dateTime = DATE_TIME.exec(text);
  const datePart = dateTime ? dateTime[1] : text;
  const day = calendarDay(datePart);
  // Date.parse rolls 2026-02-30 over into March, so the calendar date is checked on its own first.
  const instant = dateTime && day !== null ? Date.parse(text) : NaN;
  const result = dateTime ? Math.floor(instant / DAY_MS) : day;
  // An offset can push 9999-12-31 into year 10000, which has no YYYY-MM-DD form.
  if (result === null || Number.isNaN(result) || result < FIRST_DAY || result > LAST_DAY) {
    problems.push(
      queryProblem(name, `${name} must be a date (YYYY-MM-DD) or an ISO 8601 date-time`, 'date_format', text),
    );
    return null;
  }
  return result;
}

function calendarDay(text: string): number | null {
  const match = DATE.exec(text);
  if (!match) return null;
  const [year, month, date] = match.slice(1).map(Number);
  const ms = new Date(0).setUTCFullYear(year, month - 1, date);
  const check = new Date(ms);
  return check.getUTCFullYear() === year && check.getUTCMonth() === month - 1 && check.getUTCDate() === date
    ? ms / DAY_MS
    : null;
}

const FIRST_DAY = calendarDay('0001-01-01')!;
const LAST_DAY = calendarDay('9999-12-31')!;

export function formatDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}
