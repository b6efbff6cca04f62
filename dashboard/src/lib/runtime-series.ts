import type { RuntimePoint, RuntimeResponse } from '@spectator/shared';

/** One line of a chart: its legend label, one value per time (null where the version had no traffic), its colour. */
export interface ChartLine {
  label: string;
  values: Array<number | null>;
  color: string;
  /** Dash pattern in CSS pixels; solid when absent. */
  dash?: number[];
}

/** Lines over shared times (unix seconds, ascending), the form uPlot draws. */
export interface ChartData {
  times: number[];
  lines: ChartLine[];
}

/** Colours of versions, in order of appearance (distinct in light and dark themes, and for common colour blindness). */
export const VERSION_COLORS = ['#2563eb', '#ea580c', '#16a34a', '#9333ea', '#0891b2', '#ca8a04', '#db2777', '#475569'];

/** A version as its legend names it (`''`: traffic of no known version). */
export const versionLabel = (version: string): string => (version === '' ? 'no version' : version);

const PERCENTILES = [
  { key: 'p50', dash: [2, 3] },
  { key: 'p95', dash: undefined },
  { key: 'p99', dash: [8, 4] },
] as const;

/** The series of a runtime answer aligned on the union of their steps (uPlot's aligned data). */
function aligned(
  runtime: RuntimeResponse,
  lines: (
    version: string,
    color: string,
  ) => Array<{ label: string; dash?: number[]; value: (p: RuntimePoint) => number | null }>,
): ChartData {
  const times = [...new Set(runtime.versions.flatMap((v) => v.points.map((p) => Date.parse(p.at) / 1000)))].sort(
    (a, b) => a - b,
  );
  const index = new Map(times.map((t, i) => [t, i]));
  const result: ChartLine[] = [];
  runtime.versions.forEach((series, n) => {
    const color = VERSION_COLORS[n % VERSION_COLORS.length]!;
    for (const line of lines(series.version, color)) {
      const values: Array<number | null> = times.map(() => null);
      for (const point of series.points) values[index.get(Date.parse(point.at) / 1000)!] = line.value(point);
      result.push({ label: line.label, values, color, ...(line.dash ? { dash: line.dash } : {}) });
    }
  });
  return { times, lines: result };
}

/** p50, p95 and p99 of time to last byte per version (ms): one colour per version, one dash per percentile. */
export function latencyChart(runtime: RuntimeResponse): ChartData {
  return aligned(runtime, (version) =>
    PERCENTILES.map(({ key, dash }) => ({
      label: `${versionLabel(version)} ${key}`,
      ...(dash ? { dash: [...dash] } : {}),
      value: (p: RuntimePoint) => p.ttlb?.[key] ?? null,
    })),
  );
}

/** Server error rate per version, in percent. */
export function errorRateChart(runtime: RuntimeResponse): ChartData {
  return aligned(runtime, (version) => [{ label: versionLabel(version), value: (p) => p.errorRate * 100 }]);
}

/** Each version's share of the requests per step, in percent (a step without a version's traffic is 0 %). */
export function shareChart(runtime: RuntimeResponse): ChartData {
  const data = aligned(runtime, (version) => [{ label: versionLabel(version), value: (p) => p.share * 100 }]);
  return { times: data.times, lines: data.lines.map((line) => ({ ...line, values: line.values.map((v) => v ?? 0) })) };
}
