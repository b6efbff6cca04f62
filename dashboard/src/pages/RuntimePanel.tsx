import type { RuntimeResponse } from '@spectator/shared';
import { useMemo, useState } from 'react';
import { MethodBadge } from '../components/badges';
import { useEnvironmentWindow, type WindowChoice } from '../components/EnvironmentWindow';
import { ListTable } from '../components/forms';
import { Async, Empty } from '../components/states';
import { TimeChart } from '../components/TimeChart';
import { useApp } from '../hooks/app';
import { useResource } from '../hooks/resource';
import { formatCount, formatMs, formatPercent } from '../lib/format';
import { errorRateChart, latencyChart, shareChart, versionColor, versionLabel } from '../lib/runtime-series';
import { KIND_LABELS, type RowKind } from '../lib/versions';

const HOUR_MS = 3_600_000;

/** The windows one can look back over, each drawn at the finest step the backend has for it. */
export const RUNTIME_WINDOWS: ReadonlyArray<WindowChoice & { ms: number }> = [
  { id: '1h', label: 'Last hour', ms: HOUR_MS },
  { id: '24h', label: 'Last 24 hours', ms: 24 * HOUR_MS },
  { id: '7d', label: 'Last 7 days', ms: 7 * 24 * HOUR_MS },
  { id: '30d', label: 'Last 30 days', ms: 30 * 24 * HOUR_MS },
];

/** The start of a window (ISO 8601), from now. */
export const windowSince = (id: string): string =>
  new Date(Date.now() - (RUNTIME_WINDOWS.find((w) => w.id === id) ?? RUNTIME_WINDOWS[1]!).ms).toISOString();

// Stable formatters: the charts redraw when these change.
export const percentAxis = (value: number): string => formatPercent(value / 100);

/**
 * How each version of one endpoint behaves in one environment over time (issue 18): latency
 * percentiles, error rate and each version's share of the requests (a rollout), drawn with uPlot,
 * and the window's totals per version. Endpoints without an id (undocumented) are asked by route.
 */
export function RuntimePanel({
  endpoints,
  kind,
}: {
  endpoints: ReadonlyArray<{ id?: string | null; method: string; path: string }>;
  kind?: RowKind;
}) {
  const { api, project } = useApp();
  const keyOf = (e: { method: string; path: string }): string => `${e.method} ${e.path}`;
  const [chosen, setChosen] = useState<string | null>(null);
  const endpoint = endpoints.find((e) => keyOf(e) === chosen) ?? endpoints[0];
  const picked = useEnvironmentWindow({
    label: 'Runtime of',
    prefix: 'runtime.',
    environment: kind ?? 'production',
    windows: RUNTIME_WINDOWS,
    window: '24h',
    builds: true,
    children: endpoints.length > 1 && (
      <label>
        Endpoint
        <select value={endpoint ? keyOf(endpoint) : ''} onChange={(e) => setChosen(e.target.value)}>
          {endpoints.map((e) => (
            <option key={keyOf(e)} value={keyOf(e)}>
              {e.method} {e.path}
            </option>
          ))}
        </select>
      </label>
    ),
  });
  const { environment, build, windowId } = picked;
  const runtime = useResource(() => {
    if (endpoint === undefined) return Promise.resolve(null);
    const params = { environment, since: windowSince(windowId), ...(build === null ? {} : { build }) };
    return endpoint.id
      ? api.runtime(project, endpoint.id, params)
      : api.routeRuntime(project, { method: endpoint.method, path: endpoint.path, ...params });
  }, [api, project, endpoint?.id, endpoint?.method, endpoint?.path, environment, build, windowId]);

  if (endpoints.length === 0) return null;
  return (
    <section className="card runtime-panel" aria-labelledby="runtime-title">
      <h2 id="runtime-title">Runtime by version</h2>
      <p className="muted">
        What the agents measured of one endpoint, per version: latency, server errors, and each version&apos;s share of
        the requests (a rollout).
      </p>
      {picked.form}
      <Async resource={runtime} what="the runtime">
        {(data) =>
          data === null || data.versions.length === 0 ? (
            <Empty title="No runtime evidence here">
              {endpoint && (
                <>
                  <MethodBadge method={endpoint.method} /> {endpoint.path}
                </>
              )}{' '}
              had no traffic from agents in {KIND_LABELS[environment as RowKind]}
              {build === null ? '' : ` build ${build}`} in this window.
            </Empty>
          ) : (
            <RuntimeCharts runtime={data} />
          )
        }
      </Async>
    </section>
  );
}

function RuntimeCharts({ runtime }: { runtime: RuntimeResponse }) {
  const latency = useMemo(() => latencyChart(runtime), [runtime]);
  const errors = useMemo(() => errorRateChart(runtime), [runtime]);
  const share = useMemo(() => shareChart(runtime), [runtime]);
  const step = runtime.step >= 86_400 ? 'day' : runtime.step >= 3_600 ? 'hour' : 'minute';
  return (
    <>
      <ListTable
        columns={[
          { label: 'Version' },
          { label: 'Requests', numeric: true },
          { label: 'Share', numeric: true },
          { label: 'p50', numeric: true },
          { label: 'p95', numeric: true },
          { label: 'p99', numeric: true },
          { label: 'Server errors', numeric: true },
        ]}
        testId="runtime-totals"
      >
        {runtime.versions.map((series, n) => (
          <tr key={series.version}>
            <td>
              <span className="swatch" style={{ background: versionColor(n) }} /> {versionLabel(series.version)}
            </td>
            <td className="num">{formatCount(series.total.requests)}</td>
            <td className="num">{formatPercent(series.total.share)}</td>
            <td className="num">{series.total.ttlb ? formatMs(series.total.ttlb.p50) : '–'}</td>
            <td className="num">{series.total.ttlb ? formatMs(series.total.ttlb.p95) : '–'}</td>
            <td className="num">{series.total.ttlb ? formatMs(series.total.ttlb.p99) : '–'}</td>
            <td className="num">{formatPercent(series.total.errorRate)}</td>
          </tr>
        ))}
      </ListTable>
      <p className="muted small">
        One point per {step}; latency is time to last byte (dotted p50, solid p95, dashed p99).
      </p>
      <div className="charts">
        <TimeChart title="Latency per version (ms)" data={latency} format={formatMs} />
        <TimeChart title="Server error rate per version" data={errors} format={percentAxis} />
        <TimeChart title="Share of the requests per version" data={share} format={percentAxis} yMax={100} />
      </div>
    </>
  );
}
