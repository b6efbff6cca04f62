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
  /** Seconds each time covers (the series' step). */
  step: number;
}

/**
 * The x axis' range (unix seconds) for times from `min` to `max`: theirs, widened by a step on
 * each side when they span less than a step (a lone point), so the axis reads the point's time
 * rather than the 1,000 days uPlot gives one time in seconds.
 */
export function timeRange(min: number | null, max: number | null, step: number): [number, number] {
  if (min === null || max === null) {
    const now = Math.floor(Date.now() / 1000);
    return [now - step, now];
  }
  return max - min < step ? [min - step, max + step] : [min, max];
}

/** Colours of versions, in order of appearance (distinct in light and dark themes, and for common colour blindness). */
export const VERSION_COLORS = ['#2563eb', '#ea580c', '#16a34a', '#9333ea', '#0891b2', '#ca8a04', '#db2777', '#475569'];

/** The colour of the `n`th version (from 0) of a chart, its table and its legend: the colours repeat past the eighth. */
export const versionColor = (n: number): string => VERSION_COLORS[n % VERSION_COLORS.length]!;

/** A version as its legend names it (`''`: traffic of no known version). */
export const versionLabel = (version: string): string => (version === '' ? 'no version' : version);

const PERCENTILES = [
  { key: 'p50', dash: [2, 3] },
  { key: 'p95', dash: undefined },
  { key: 'p99', dash: [8, 4] },
] as const;

/** Series per version, each with points at some steps: a runtime answer, or a version share answer. */
interface VersionSeries<P extends { at: string }> {
  step: number;
  versions: ReadonlyArray<{ version: string; points: readonly P[] }>;
}

/** The series of a runtime answer aligned on the union of their steps (uPlot's aligned data). */
function aligned<P extends { at: string }>(
  runtime: VersionSeries<P>,
  lines: (version: string, color: string) => Array<{ label: string; dash?: number[]; value: (p: P) => number | null }>,
): ChartData {
  const times = [...new Set(runtime.versions.flatMap((v) => v.points.map((p) => Date.parse(p.at) / 1000)))].sort(
    (a, b) => a - b,
  );
  const index = new Map(times.map((t, i) => [t, i]));
  const result: ChartLine[] = [];
  runtime.versions.forEach((series, n) => {
    const color = versionColor(n);
    for (const line of lines(series.version, color)) {
      const values: Array<number | null> = times.map(() => null);
      for (const point of series.points) values[index.get(Date.parse(point.at) / 1000)!] = line.value(point);
      result.push({ label: line.label, values, color, ...(line.dash ? { dash: line.dash } : {}) });
    }
  });
  return { times, lines: result, step: runtime.step };
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

/**
 * Each version's share of the requests per step, in percent (a step without a version's traffic is
 * 0 %): of one endpoint (a runtime answer) or of every endpoint together (`GET /runtime/share`).
 */
export function shareChart(runtime: VersionSeries<{ at: string; share: number }>): ChartData {
  const data = aligned(runtime, (version) => [{ label: versionLabel(version), value: (p) => p.share * 100 }]);
  return { ...data, lines: data.lines.map((line) => ({ ...line, values: line.values.map((v) => v ?? 0) })) };
}
