import uPlot from 'uplot';
import { formatUsd } from '../money';
import type { Overview } from '../overview-data';
import { countTicks, dayX, fromZero, useDayChart } from './day-chart';

/** Plotted in micro-USD, whole numbers, so no float rounding ever reaches a label. */
const usdLabel = (micros: number) => formatUsd(BigInt(Math.max(0, Math.round(micros))));

/** Revenue by UTC day as bars, with paid crawls as a line on a second axis. */
export function RevenueChart({ days }: { days: Overview['byDay'] }) {
  const box = useDayChart(days, (shown) => [
    {
      scales: { usd: fromZero, n: fromZero },
      axes: [
        { scale: 'usd', values: (_u, ticks) => ticks.map(usdLabel), size: 70 },
        { scale: 'n', side: 1, grid: { show: false }, values: countTicks },
      ],
      series: [
        {
          label: 'Revenue',
          scale: 'usd',
          fill: 'rgba(37, 99, 235, 0.35)',
          stroke: '#2563eb',
          paths: uPlot.paths.bars!({ size: [0.6, 40] }),
          value: (_u, v) => (v == null ? '' : usdLabel(v)),
        },
        { label: 'Paid crawls', scale: 'n', stroke: '#16a34a', width: 2 },
      ],
    },
    [shown.map((d) => dayX(d.day)), shown.map((d) => Number(d.revenue)), shown.map((d) => d.paidGates)],
  ]);

  return (
    <figure class="chart">
      <div ref={box} data-testid="revenue-chart" />
      <figcaption>Revenue by day (UTC)</figcaption>
    </figure>
  );
}
