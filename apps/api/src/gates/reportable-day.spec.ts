import { CLOCK_AHEAD_MS, isReportableDay } from './reportable-day';

describe('isReportableDay', () => {
  const noon = new Date('2026-12-04T12:00:00Z');
  it('takes today and the two days before, nothing older, and only real dates', () => {
    expect(['2026-12-04', '2026-12-03', '2026-12-02'].map((day) => isReportableDay(day, noon))).toEqual([
      true,
      true,
      true,
    ]);
    expect(isReportableDay('2026-12-01', noon)).toBe(false);
    expect(isReportableDay('2026-02-30', new Date('2026-03-01T12:00:00Z'))).toBe(false);
    expect(isReportableDay('2026-12-4', noon)).toBe(false);
  });

  it("takes tomorrow only in today's last minutes, from a middleware whose clock is a little ahead", () => {
    expect(isReportableDay('2026-12-05', noon)).toBe(false);
    const lastMinutes = new Date(Date.parse('2026-12-05T00:00:00Z') - CLOCK_AHEAD_MS);
    expect(isReportableDay('2026-12-05', lastMinutes)).toBe(true);
    expect(isReportableDay('2026-12-05', new Date(lastMinutes.getTime() - 1))).toBe(false);
    expect(isReportableDay('2026-12-06', lastMinutes)).toBe(false);
  });
});
