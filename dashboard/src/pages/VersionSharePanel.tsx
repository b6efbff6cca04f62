import type { VersionShareResponse } from '@spectator/shared';
import { useMemo } from 'react';
import { EndpointName } from '../components/badges';
import { useEnvironmentWindow } from '../components/EnvironmentWindow';
import { ListTable } from '../components/forms';
import { Pager, usePage } from '../components/Pager';
import { Async, Empty } from '../components/states';
import { TimeChart } from '../components/TimeChart';
import { useApp } from '../hooks/app';
import { useResource } from '../hooks/resource';
import { formatCount, formatPercent } from '../lib/format';
import { shareChart, versionColor, versionLabel } from '../lib/runtime-series';
import { KIND_LABELS, type RowKind } from '../lib/versions';
import { percentAxis, RUNTIME_WINDOWS, windowSince } from './RuntimePanel';

/**
 * Version share per environment (issue 18): which versions the traffic of every endpoint together
 * ran on over time (a rollout: a canary on 30 % of the requests shows 30 %), drawn with uPlot,
 * and each endpoint's split over the window.
 */
export function VersionSharePanel({ kind }: { kind?: RowKind }) {
  const { api, project } = useApp();
  const picked = useEnvironmentWindow({
    label: 'Version share of',
    prefix: 'share.',
    environment: kind ?? 'production',
    windows: RUNTIME_WINDOWS,
    window: '24h',
    builds: true,
  });
  const { environment, build, windowId } = picked;
  const share = useResource(
    () =>
      api.versionShare(project, { environment, since: windowSince(windowId), ...(build === null ? {} : { build }) }),
    [api, project, environment, build, windowId],
  );
  return (
    <section className="card share-panel" aria-labelledby="share-title">
      <h2 id="share-title">Version share</h2>
      <p className="muted">
        Which versions the requests of every endpoint ran on, as the agents counted them: a rollout in numbers.
      </p>
      {picked.form}
      <Async resource={share} what="the version share">
        {(data) =>
          data.versions.length === 0 ? (
            <Empty title="No traffic here">
              No agent counted requests in {KIND_LABELS[environment as RowKind]}
              {build === null ? '' : ` build ${build}`} in this window.
            </Empty>
          ) : (
            <ShareView share={data} />
          )
        }
      </Async>
    </section>
  );
}

function ShareView({ share }: { share: VersionShareResponse }) {
  const chart = useMemo(() => shareChart(share), [share]);
  const colorOf = useMemo(() => new Map(share.versions.map((v, n) => [v.version, versionColor(n)])), [share]);
  const { rows, pager } = usePage(share.endpoints);
  return (
    <>
      <ListTable
        columns={[{ label: 'Version' }, { label: 'Requests', numeric: true }, { label: 'Share', numeric: true }]}
        testId="share-totals"
      >
        {share.versions.map((v) => (
          <tr key={v.version}>
            <td>
              <span className="swatch" style={{ background: colorOf.get(v.version) }} /> {versionLabel(v.version)}
            </td>
            <td className="num">{formatCount(v.requests)}</td>
            <td className="num">{formatPercent(v.share)}</td>
          </tr>
        ))}
      </ListTable>
      <div className="charts">
        <TimeChart title="Share of all requests per version" data={chart} format={percentAxis} yMax={100} />
      </div>
      <ListTable
        columns={[{ label: 'Endpoint' }, { label: 'Requests', numeric: true }, { label: 'Versions' }]}
        testId="share-endpoints"
      >
        {rows.map((endpoint) => (
          <tr key={`${endpoint.method} ${endpoint.path}`}>
            <td>
              <EndpointName method={endpoint.method} path={endpoint.path} />
              {endpoint.endpointId === null && <span className="muted small"> undocumented</span>}
            </td>
            <td className="num">{formatCount(endpoint.requests)}</td>
            <td className="share-split">
              {endpoint.versions.map((v) => (
                <span key={v.version}>
                  <span className="swatch" style={{ background: colorOf.get(v.version) }} /> {versionLabel(v.version)}{' '}
                  {formatPercent(v.share)}
                </span>
              ))}
            </td>
          </tr>
        ))}
      </ListTable>
      <Pager pager={pager} testId="share-endpoints-pager" />
    </>
  );
}
