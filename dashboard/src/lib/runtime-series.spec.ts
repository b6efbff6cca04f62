import type { RuntimePoint, RuntimeResponse } from '@spectator/shared';
import { errorRateChart, latencyChart, shareChart, timeRange, VERSION_COLORS, versionColor } from './runtime-series';

const point = (at: string, requests: number, share: number, p95: number | null): RuntimePoint => ({
  at,
  requests,
  requestRate: requests / 60,
  share,
  serverErrors: requests / 10,
  errorRate: 0.1,
  upstreamFailures: 0,
  clientLeft: 0,
  ttfb: null,
  ttlb: p95 === null ? null : { p50: p95 / 2, p95, p99: p95 * 2 },
});

const total = point('2026-01-01T10:00:00Z', 0, 0, null);
const runtime: RuntimeResponse = {
  endpoint: { id: 'e', method: 'GET', path: '/carts' },
  environment: 'production',
  name: null,
  since: '2026-01-01T10:00:00Z',
  step: 60,
  versions: [
    {
      version: '1.0',
      total,
      points: [point('2026-01-01T10:00:00Z', 70, 0.7, 20), point('2026-01-01T10:01:00Z', 100, 1, 22)],
    },
    { version: '2.0', total, points: [point('2026-01-01T10:00:00Z', 30, 0.3, null)] },
  ],
};
const t0 = Date.parse('2026-01-01T10:00:00Z') / 1000;

describe('runtime charts', () => {
  it('colour versions in order, the colours repeating past the last', () => {
    expect([0, 1, 7, 8, 9].map(versionColor)).toEqual([
      VERSION_COLORS[0],
      VERSION_COLORS[1],
      VERSION_COLORS[7],
      VERSION_COLORS[0],
      VERSION_COLORS[1],
    ]);
  });

  it('align every version on the union of steps, null where a version had no traffic', () => {
    const latency = latencyChart(runtime);
    expect(latency.times).toEqual([t0, t0 + 60]);
    expect(latency.lines.map((l) => [l.label, l.values, l.color])).toEqual([
      ['1.0 p50', [10, 11], VERSION_COLORS[0]],
      ['1.0 p95', [20, 22], VERSION_COLORS[0]],
      ['1.0 p99', [40, 44], VERSION_COLORS[0]],
      ['2.0 p50', [null, null], VERSION_COLORS[1]],
      ['2.0 p95', [null, null], VERSION_COLORS[1]],
      ['2.0 p99', [null, null], VERSION_COLORS[1]],
    ]);
    expect(latency.lines[1]!.dash).toBeUndefined();
    expect(errorRateChart(runtime).lines.map((l) => l.values)).toEqual([
      [10, 10],
      [10, null],
    ]);
  });

  it('reads a step without a version as 0 % of the share', () => {
    expect(shareChart(runtime).lines.map((l) => [l.label, l.values])).toEqual([
      ['1.0', [70, 100]],
      ['2.0', [30, 0]],
    ]);
  });

  it('draws every endpoint’s version share from a share answer', () => {
    const chart = shareChart({
      step: 3600,
      versions: [
        { version: '1.0', points: [{ at: '2026-01-01T10:00:00Z', share: 0.7 }] },
        { version: '', points: [{ at: '2026-01-01T11:00:00Z', share: 1 }] },
      ],
    });
    expect(chart.step).toBe(3600);
    expect(chart.times).toEqual([t0, t0 + 3600]);
    expect(chart.lines.map((l) => [l.label, l.values])).toEqual([
      ['1.0', [70, 0]],
      ['no version', [0, 100]],
    ]);
  });

  it('widens the time axis around a lone step by a step on each side, not over years', () => {
    expect(timeRange(t0, t0, 60)).toEqual([t0 - 60, t0 + 60]);
    expect(timeRange(t0, t0 + 60, 60)).toEqual([t0, t0 + 60]);
    expect(timeRange(t0, t0 + 30, 3600)).toEqual([t0 - 3600, t0 + 30 + 3600]);
    const [from, to] = timeRange(null, null, 60);
    expect(to - from).toBe(60);
    expect(Math.abs(to - Date.now() / 1000)).toBeLessThan(3600);
  });
});
