import { ValidationFailed } from '../http/validation-items';
import { MAX_RANGE_DAYS, parseDateRange } from './date-range';

const NOW = new Date('2026-03-10T15:00:00Z');

function problems(query: { from?: unknown; to?: unknown }) {
  try {
    parseDateRange(query, NOW);
  } catch (error) {
    if (error instanceof ValidationFailed) return error.items;
    throw error;
  }
  throw new Error('expected a ValidationFailed');
}

describe('stats date range', () => {
  it('defaults to the 30 days ending today (UTC)', () => {
    const range = parseDateRange({}, NOW);
    expect(range).toMatchObject({ from: '2026-02-09', to: '2026-03-10' });
    expect(range.days).toHaveLength(30);
    expect(range.start).toEqual(new Date('2026-02-09T00:00:00Z'));
    expect(range.end).toEqual(new Date('2026-03-11T00:00:00Z'));
  });

  it('takes 30 days back from a given to, and today as the end of a given from', () => {
    expect(parseDateRange({ to: '2026-01-31' }, NOW)).toMatchObject({ from: '2026-01-02', to: '2026-01-31' });
    expect(parseDateRange({ from: '2026-03-01' }, NOW)).toMatchObject({ from: '2026-03-01', to: '2026-03-10' });
  });

  it('lists every day, both ends included, across a month end', () => {
    expect(parseDateRange({ from: '2024-02-27', to: '2024-03-01' }, NOW).days).toEqual([
      '2024-02-27',
      '2024-02-28',
      '2024-02-29',
      '2024-03-01',
    ]);
  });

  it('takes a date-time as the UTC day it falls on', () => {
    const range = parseDateRange({ from: '2026-03-01T23:30:00-05:00', to: '2026-03-05T01:00:00.123456+02:00' }, NOW);
    expect(range).toMatchObject({ from: '2026-03-02', to: '2026-03-04' });
  });

  it('accepts one day, and exactly the longest range', () => {
    expect(parseDateRange({ from: '2026-03-01', to: '2026-03-01' }, NOW).days).toEqual(['2026-03-01']);
    expect(parseDateRange({ from: '2024-01-01', to: '2024-12-31' }, NOW).days).toHaveLength(MAX_RANGE_DAYS);
  });

  it.each([
    '2026-02-30',
    '2026-13-01',
    '26-01-01',
    '2026-1-1',
    'yesterday',
    '2026-01-01T10:00:00',
    '2026-01-01T25:00:00Z',
    '2026-01-01 10:00:00Z',
    '9999-12-31T23:00:00-05:00',
  ])('rejects the date %p', (text) => {
    expect(problems({ from: text, to: '2026-03-01' })).toEqual([
      expect.objectContaining({ loc: ['query', 'from'], type: 'date_format', input: text }),
    ]);
  });

  it('reports both bad dates at once, and a repeated parameter', () => {
    expect(problems({ from: 'x', to: 'y' }).map((item) => item.loc)).toEqual([
      ['query', 'from'],
      ['query', 'to'],
    ]);
    expect(problems({ from: ['2026-01-01', '2026-01-02'] })).toEqual([
      expect.objectContaining({ loc: ['query', 'from'], type: 'string_type' }),
    ]);
  });

  it('rejects to before from, blaming to, or from when to is the default', () => {
    expect(problems({ from: '2026-03-02', to: '2026-03-01' })).toEqual([
      expect.objectContaining({ loc: ['query', 'to'], type: 'date_order' }),
    ]);
    expect(problems({ from: '2026-03-11' })).toEqual([
      expect.objectContaining({ loc: ['query', 'from'], type: 'date_order' }),
    ]);
  });

  it('rejects a to whose default from (29 days before) falls before 0001-01-01, as no database holds such a day', () => {
    expect(problems({ to: '0001-01-05' })).toEqual([
      expect.objectContaining({ loc: ['query', 'to'], type: 'range_start', input: '0001-01-05' }),
    ]);
    expect(parseDateRange({ from: '0001-01-01', to: '0001-01-05' }, NOW).days).toHaveLength(5);
  });

  it('rejects a range longer than 366 days', () => {
    expect(problems({ from: '2025-01-01', to: '2026-01-02' })).toEqual([
      expect.objectContaining({ loc: ['query', 'to'], type: 'range_too_long', ctx: { max_days: MAX_RANGE_DAYS } }),
    ]);
  });
});
