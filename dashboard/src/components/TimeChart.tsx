import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { type ChartData, timeRange } from '../lib/runtime-series';

/** The page's colour for `name` (a CSS custom property), so charts follow the theme. */
function cssColor(element: HTMLElement, name: string, fallback: string): string {
  return getComputedStyle(element).getPropertyValue(name).trim() || fallback;
}

/**
 * A time series chart drawn by uPlot on a canvas: one line per `data.lines`, times in unix
 * seconds, values formatted by `format` on the axis and in the legend (which also shows the value
 * under the cursor). Redrawn when `data` changes; follows the width of its container.
 */
export function TimeChart({
  title,
  data,
  format,
  yMax,
  height = 200,
}: {
  title: string;
  data: ChartData;
  format: (value: number) => string;
  /** The y axis' top; by default the data's. */
  yMax?: number;
  height?: number;
}) {
  const target = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = target.current;
    if (!element) return;
    const axis = cssColor(element, '--muted', '#6b7280');
    const grid = cssColor(element, '--line', '#e5e7eb');
    const chart = new uPlot(
      {
        width: Math.max(240, element.clientWidth),
        height,
        series: [
          {},
          ...data.lines.map((line) => ({
            label: line.label,
            stroke: line.color,
            width: 2,
            ...(line.dash ? { dash: line.dash } : {}),
            value: (_chart: uPlot, value: number | null) => (value === null ? '–' : format(value)),
            // A lone step has no line to draw: show the points when there are few.
            points: { show: data.times.length <= 30 },
          })),
        ],
        scales: {
          // From the data's own times (no zoom here): for a lone time uPlot adds 86,400 / its `ms`
          // (0.001 for seconds), an axis of 1,000 days.
          x: { time: true, range: () => timeRange(data.times[0] ?? null, data.times.at(-1) ?? null, data.step) },
          y: { range: (_chart, _min, max) => [0, yMax ?? (max > 0 ? max * 1.1 : 1)] },
        },
        axes: [
          { stroke: axis, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } },
          {
            stroke: axis,
            grid: { stroke: grid, width: 1 },
            ticks: { stroke: grid },
            size: 64,
            values: (_chart, splits) => splits.map(format),
          },
        ],
        cursor: { drag: { x: false, y: false } },
      },
      [data.times, ...data.lines.map((line) => line.values)],
      element,
    );
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(240, element.clientWidth), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [data, format, yMax, height]);
  return (
    <figure className="time-chart">
      <figcaption>{title}</figcaption>
      <div ref={target} role="img" aria-label={title} />
    </figure>
  );
}
