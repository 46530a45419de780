import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatUsd } from '../money';
import type { Overview } from '../overview-data';

const DAY_SECONDS = 86_400;

/** The figure's width, with a floor that still fits a 375 px phone. */
const chartWidth = (element: HTMLElement) => Math.max(240, element.clientWidth);

/** Plotted in micro-USD, whole numbers, so no float rounding ever reaches a label. */
const usdLabel = (micros: number) => formatUsd(BigInt(Math.max(0, Math.round(micros))));

/** Revenue by UTC day as bars, with paid crawls as a line on a second axis. */
export function RevenueChart({ days }: { days: Overview['byDay'] }) {
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = box.current;
    if (!element || days.length === 0) return;
    const data: uPlot.AlignedData = [
      days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000),
      days.map((d) => Number(d.revenue)),
      days.map((d) => d.paidGates),
    ];
    const chart = new uPlot(
      {
        width: chartWidth(element),
        height: 260,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { x: { time: true, range: (_u, min, max) => [min - DAY_SECONDS / 2, max + DAY_SECONDS / 2] }, usd: { range: (_u, _min, max) => [0, Math.max(max, 1)] }, n: { range: (_u, _min, max) => [0, Math.max(max, 1)] } },
        axes: [
          {},
          { scale: 'usd', values: (_u, ticks) => ticks.map(usdLabel), size: 70 },
          { scale: 'n', side: 1, grid: { show: false }, values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? String(t) : '')) },
        ],
        series: [
          { value: (_u, ts) => (ts == null ? '' : new Date(ts * 1000).toISOString().slice(0, 10)) },
          { label: 'Revenue', scale: 'usd', fill: 'rgba(37, 99, 235, 0.35)', stroke: '#2563eb', paths: uPlot.paths.bars!({ size: [0.6, 40] }), value: (_u, v) => (v == null ? '' : usdLabel(v)) },
          { label: 'Paid crawls', scale: 'n', stroke: '#16a34a', width: 2 },
        ],
      },
      data,
      element,
    );
    const resize = () => chart.setSize({ width: chartWidth(element), height: 260 });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      chart.destroy();
    };
  }, [days]);

  return (
    <figure class="chart">
      <div ref={box} data-testid="revenue-chart" />
      <figcaption>Revenue by day (UTC)</figcaption>
    </figure>
  );
}
