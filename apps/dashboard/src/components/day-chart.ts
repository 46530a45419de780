import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

const DAY_SECONDS = 86_400;
const HEIGHT = 260;

/** The figure's width, with a floor that still fits a 375 px phone. */
const chartWidth = (element: HTMLElement) => Math.max(240, element.clientWidth);

/** A UTC day ("2026-11-01") as the chart's x value, in seconds. */
export const dayX = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;

/** Whole numbers only on a count axis: uPlot may place ticks between them. */
export const countTicks = (_u: uPlot, ticks: number[]) => ticks.map((t) => (Number.isInteger(t) ? String(t) : ''));

/** A count or amount axis that starts at 0 and never collapses when every value is 0. */
export const fromZero: uPlot.Scale = { range: (_u, _min, max) => [0, Math.max(max, 1)] };

type ChartSpec = [options: Pick<uPlot.Options, 'scales' | 'axes' | 'series'>, data: uPlot.AlignedData];

/** A by-day chart drawn into the element the returned ref is put on, redrawn when `days` changes; nothing for no days. */
export function useDayChart<Day>(days: readonly Day[], spec: (days: readonly Day[]) => ChartSpec) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element || days.length === 0) return;
    return drawDayChart(element, ...spec(days));
  }, [days]);
  return box;
}

/**
 * Draws a by-day chart into `element`: UTC days on x (half a day of room each side, the legend
 * shows the day), the caller's scales, axes and series after them. Follows the window's width;
 * returns what removes it.
 */
function drawDayChart(element: HTMLElement, ...[options, data]: ChartSpec): () => void {
  const chart = new uPlot(
    {
      width: chartWidth(element),
      height: HEIGHT,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      scales: {
        x: { time: true, range: (_u, min, max) => [min - DAY_SECONDS / 2, max + DAY_SECONDS / 2] },
        ...options.scales,
      },
      axes: [{}, ...(options.axes ?? [])],
      series: [
        { value: (_u, ts) => (ts == null ? '' : new Date(ts * 1000).toISOString().slice(0, 10)) },
        ...options.series,
      ],
    },
    data,
    element,
  );
  const resize = () => chart.setSize({ width: chartWidth(element), height: HEIGHT });
  window.addEventListener('resize', resize);
  return () => {
    window.removeEventListener('resize', resize);
    chart.destroy();
  };
}
