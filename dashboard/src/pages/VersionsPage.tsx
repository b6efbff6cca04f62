import {
  type CellRuntime,
  type EnvironmentKind,
  NOT_SEEN_VERSION,
  type VersionCell,
  type VersionMatrixResponse,
} from '@spectator/shared';
import { useState } from 'react';
import { MethodBadge } from '../components/badges';
import { TimeAgo } from '../components/TimeAgo';
import { Async, Empty } from '../components/states';
import { useApp } from '../hooks/app';
import { useResource } from '../hooks/resource';
import { environmentLabel, formatCount, formatMs, formatPercent, formatTime, shortCommit } from '../lib/format';
import { mergeMatrixPages, viewMatrix } from '../lib/matrix';
import { routeHref } from '../lib/routes';
import { KIND_LABELS, KIND_ORDER, type RowKind } from '../lib/versions';
import { ComparePanel } from './ComparePanel';
import { DriftPanel, driftCellKey, driftSinceByCell, useDrift } from './DriftPanel';
import { RuntimePanel } from './RuntimePanel';
import { VersionSharePanel } from './VersionSharePanel';

/** Rows per page: the most the backend gives at once, so 100 × 100 needs one request. */
const PAGE_ROWS = 100;

const rowKind = (kind: EnvironmentKind | undefined): RowKind | undefined => KIND_ORDER.find((k) => k === kind);

/**
 * Which version of each endpoint runs where (spec §9.5): rows are CI runs by pull request, staging
 * builds and production builds; columns are endpoints; cells the version, `N/A` or drift.
 */
export function VersionsPage({ kind: routeKind }: { kind?: EnvironmentKind }) {
  const { api, project } = useApp();
  const kind = rowKind(routeKind);
  const matrix = useResource(
    () => api.versions(project, { ...(kind ? { kind } : {}), limit: PAGE_ROWS }),
    [api, project, kind],
    (e) =>
      e.type === 'version.changed' ||
      e.type === 'proposal.step' ||
      e.type === 'documentation.committed' ||
      e.type === 'capture.started',
  );
  const [endpointFilter, setEndpointFilter] = useState('');
  const drift = useDrift();

  return (
    <div className="page page-wide">
      <header className="page-header">
        <div>
          <h1>Versions</h1>
          <p className="muted">
            The version of each endpoint seen running in each CI run, staging build and production build, from evidence
            alone.
          </p>
        </div>
      </header>
      <div className="toolbar">
        <nav className="segmented" aria-label="Environment kind">
          <a href={routeHref({ page: 'versions', project })} aria-current={!kind ? 'page' : undefined}>
            All
          </a>
          {KIND_ORDER.map((k) => (
            <a
              key={k}
              href={routeHref({ page: 'versions', project, kind: k })}
              aria-current={kind === k ? 'page' : undefined}
            >
              {KIND_LABELS[k]}
            </a>
          ))}
        </nav>
        <input
          type="search"
          aria-label="Filter endpoints"
          placeholder="Filter endpoints…"
          value={endpointFilter}
          onChange={(e) => setEndpointFilter(e.target.value)}
        />
        <span className="legend muted">
          {/* Every colour of a cell is named here: an amber 1.0 read as a warning nobody explained. */}
          <span className="cell-latest">1.1</span> latest documented · <span className="cell-behind">1.0</span> behind
          the latest · <span className="cell-na">N/A</span> never seen there ·{' '}
          <span className="cell-drift">⚠ drift</span> traffic matches no version · under a version: p95 time to last
          byte · server error rate
        </span>
      </div>
      <Async resource={matrix} what="the versions table">
        {(first) => (
          <>
            <Matrix first={first} kind={kind} endpointFilter={endpointFilter} driftSince={driftSinceByCell(drift)} />
            <RuntimePanel endpoints={first.endpoints} kind={kind} />
            <VersionSharePanel kind={kind} />
          </>
        )}
      </Async>
      <DriftPanel kind={kind} drift={drift} />
      <ComparePanel />
    </div>
  );
}

function Matrix({
  first,
  kind,
  endpointFilter,
  driftSince,
}: {
  first: VersionMatrixResponse;
  kind?: RowKind;
  endpointFilter: string;
  /** Where each drifting cell's drift began, by `driftCellKey`. */
  driftSince: ReadonlyMap<string, string>;
}) {
  const { api, project } = useApp();
  // Further pages extend the first page they were loaded after; a live reload brings a new first
  // page and starts over from it, so the table never shows a stale first page.
  const [extended, setExtended] = useState<{ base: VersionMatrixResponse; merged: VersionMatrixResponse } | null>(null);
  const matrix = extended?.base === first ? extended.merged : first;
  const [more, setMore] = useState<'idle' | 'busy' | string>('idle');
  const view = viewMatrix(matrix, kind, endpointFilter);

  const loadMore = async () => {
    if (!matrix.nextCursor) return;
    setMore('busy');
    try {
      const next = await api.versions(project, {
        ...(kind ? { kind } : {}),
        limit: PAGE_ROWS,
        cursor: matrix.nextCursor,
      });
      setExtended({ base: first, merged: mergeMatrixPages(matrix, next) });
      setMore('idle');
    } catch (caught) {
      setMore((caught as Error).message);
    }
  };

  if (matrix.endpoints.length === 0)
    return (
      <Empty title="No documented endpoints yet">
        Versions appear once endpoints are documented and agents report traffic.
      </Empty>
    );
  if (view.rows.length === 0)
    return (
      <Empty title={kind ? `No evidence from ${KIND_LABELS[kind]} yet` : 'No evidence yet'}>
        Run the agent with <code>--env ci --pr N</code>, or in staging or production with <code>SPECTATOR_BUILD</code>{' '}
        set.
      </Empty>
    );
  return (
    <>
      <div className="matrix-scroll" tabIndex={0} role="region" aria-label="Versions by environment and endpoint">
        <table className="matrix">
          <thead>
            <tr>
              <th scope="col" className="corner">
                Environment
              </th>
              {view.endpoints.map((endpoint) => (
                <th
                  scope="col"
                  key={endpoint.id}
                  className="endpoint-col"
                  title={`${endpoint.method} ${endpoint.path} (${endpoint.removed ? 'removed in' : 'latest'} ${endpoint.version})`}
                >
                  <span className="vertical">
                    <MethodBadge method={endpoint.method} /> {endpoint.path}
                    {endpoint.removed && <span className="muted small"> removed</span>}
                  </span>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {view.rows.map(({ row, cells, runtime }, rowIndex) => (
              <tr key={`${row.kind} ${row.name} ${row.build ?? ''} ${row.pullRequest ?? ''} ${rowIndex}`}>
                <th scope="row" className={`row-head kind-${row.kind}`}>
                  <span className="row-title">{environmentLabel(row)}</span>
                  <span className="muted small" title={`last seen ${formatTime(row.lastSeen)}`}>
                    {shortCommit(row.commit)} · <TimeAgo at={row.lastSeen} />
                  </span>
                </th>
                {cells.map((cell, index) => (
                  <MatrixCell
                    key={view.endpoints[index]!.id}
                    cell={cell}
                    runtime={runtime[index] ?? null}
                    latest={view.endpoints[index]!.version}
                    removed={view.endpoints[index]!.removed === true}
                    since={driftSince.get(driftCellKey(row.kind, row.name, view.endpoints[index]!.id)) ?? ''}
                  />
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p className="muted small">
        {view.rows.length} rows × {view.endpoints.length} endpoints
        {matrix.nextCursor && (
          <>
            {' · '}
            <button type="button" onClick={loadMore} disabled={more === 'busy'}>
              {more === 'busy' ? 'Loading…' : 'Load more rows'}
            </button>
          </>
        )}
        {more !== 'idle' && more !== 'busy' && <span role="alert"> {more}</span>}
      </p>
    </>
  );
}

function MatrixCell({
  cell,
  runtime,
  latest,
  removed,
  since,
}: {
  cell: VersionCell;
  runtime: CellRuntime | null;
  latest: string;
  /** The latest version removed the endpoint: a cell at it shows traffic answered 404, 405 or 410 only. */
  removed: boolean;
  /** Where a drifting cell's drift began, in words (`since PR #42 (abc1234)`); empty when not known. */
  since: string;
}) {
  if (cell.version === NOT_SEEN_VERSION) return <td className="cell-na">{NOT_SEEN_VERSION}</td>;
  const figures = runtime && <RuntimeFigures runtime={runtime} />;
  if (cell.drift)
    return (
      <td
        className="cell-drift"
        title={`Traffic here conforms to no documented version (nearest ${cell.version})${since === '' ? '' : `, ${since}`}`}
      >
        <span className="cell-version">
          <span aria-label="drift">⚠</span> {cell.version}
        </span>
        {since !== '' && <span className="cell-since">{since}</span>}
        {figures}
      </td>
    );
  const title = removed
    ? cell.version === latest
      ? `removed in ${latest}: answered 404, 405 or 410 only`
      : `still served here; removed in ${latest}`
    : cell.version === latest
      ? 'latest version'
      : `behind the latest ${latest}`;
  return (
    <td className={cell.version === latest ? 'cell-latest' : 'cell-behind'} title={title}>
      <span className="cell-version">{cell.version}</span>
      {figures}
    </td>
  );
}

/** p95 and error rate beside a cell's version: what the row's agents measured of the endpoint. */
function RuntimeFigures({ runtime }: { runtime: CellRuntime }) {
  const p95 = runtime.p95 === null ? 'no timing' : formatMs(runtime.p95);
  return (
    <span
      className={`cell-runtime${runtime.errorRate >= 0.01 ? ' cell-errors' : ''}`}
      title={`${formatCount(runtime.requests)} requests: p95 ${p95} (time to last byte), ${formatPercent(runtime.errorRate)} server errors`}
    >
      <span>{p95}</span>
      <span>{formatPercent(runtime.errorRate)}</span>
    </span>
  );
}
