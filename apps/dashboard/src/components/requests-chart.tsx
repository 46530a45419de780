import type { CrawlerDayView } from '@crawlgate/publisher';
import { ACTIONS } from '../crawlers-data';
import { countTicks, dayX, fromZero, useDayChart } from './day-chart';

/** Requests by UTC day, one line per action; the same numbers as a table for screen readers and tests. */
export function RequestsChart({ days }: { days: CrawlerDayView[] }) {
  const box = useDayChart(days, (shown) => [
    {
      scales: { y: fromZero },
      axes: [{ values: countTicks }],
      series: ACTIONS.map(({ label, color }) => ({
        label,
        stroke: color,
        width: 2,
        points: { show: shown.length <= 31 },
      })),
    },
    [shown.map((d) => dayX(d.day)), ...ACTIONS.map(({ action }) => shown.map((d) => d[action]))],
  ]);

  return (
    <figure class="chart">
      <div ref={box} data-testid="requests-chart" />
      <figcaption>Requests by day (UTC) and what the gate did</figcaption>
      <details>
        <summary>As a table</summary>
        <table aria-label="Requests by day">
          <thead>
            <tr>
              <th>Day</th>
              {ACTIONS.map(({ action, label }) => (
                <th key={action} class="num">
                  {label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {days.map((day) => (
              <tr key={day.day} data-day={day.day}>
                <td>{day.day}</td>
                {ACTIONS.map(({ action }) => (
                  <td key={action} class="num">
                    {day[action]}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
