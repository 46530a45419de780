/** The date ranges the reporting pages offer: the last n whole UTC days, today included. */
export const RANGES = [7, 30, 90] as const;
export type RangeDays = (typeof RANGES)[number];

export function RangePicker({ value, onChange }: { value: RangeDays; onChange(days: RangeDays): void }) {
  return (
    <label class="inline">
      Range{' '}
      <select
        value={String(value)}
        onChange={(event) => onChange(Number((event.target as HTMLSelectElement).value) as RangeDays)}
      >
        {RANGES.map((n) => (
          <option key={n} value={String(n)}>
            Last {n} days
          </option>
        ))}
      </select>
    </label>
  );
}
