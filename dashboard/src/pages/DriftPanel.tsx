import type { DriftCellResponse } from '@spectator/shared';
import { MethodBadge } from '../components/badges';
import { Async } from '../components/states';
import { useApp } from '../hooks/app';
import { type Resource, useResource } from '../hooks/resource';
import { environmentLabel } from '../lib/format';
import type { RowKind } from '../lib/versions';

/** The project's drifting cells with where each began (`GET /drift`), reloaded when drift or versions change. */
export function useDrift(): Resource<DriftCellResponse[]> {
  const { api, project } = useApp();
  return useResource(
    () => api.drift(project),
    [api, project],
    (e) => e.type === 'drift.appeared' || e.type === 'version.changed' || e.type === 'documentation.committed',
  );
}

/** The key of a drifting cell: its row (kind and name) and endpoint. */
export function driftCellKey(kind: string, name: string, endpointId: string): string {
  return `${kind}\u0000${name}\u0000${endpointId}`;
}

/** Where each drifting cell's drift began in words, by `driftCellKey` (empty until loaded). */
export function driftSinceByCell(drift: Resource<DriftCellResponse[]>): Map<string, string> {
  if (drift.state !== 'ready') return new Map();
  return new Map(
    drift.data.map((cell) => [driftCellKey(cell.environment.kind, cell.environment.name, cell.endpointId), cell.since]),
  );
}

/**
 * Where drift began (issue 18): each drifting cell of the matrix with the first pull request,
 * commit and builds where its traffic was seen, e.g. "since PR #42 (abc1234), staging build s-102".
 * Shown only when something drifts.
 */
export function DriftPanel({ kind, drift }: { kind?: RowKind; drift: Resource<DriftCellResponse[]> }) {
  return (
    <Async resource={drift} what="where drift began">
      {(cells) => {
        const shown = cells.filter((cell) => kind === undefined || cell.environment.kind === kind);
        if (shown.length === 0) return null;
        return (
          <section className="card" aria-labelledby="drift-title">
            <h2 id="drift-title">Where drift began</h2>
            <ul className="drift-origins">
              {shown.map((cell) => (
                <DriftItem key={`${cell.environment.kind} ${cell.environment.name} ${cell.endpointId}`} cell={cell} />
              ))}
            </ul>
          </section>
        );
      }}
    </Async>
  );
}

function DriftItem({ cell }: { cell: DriftCellResponse }) {
  return (
    <li>
      <MethodBadge method={cell.method} /> <code>{cell.path}</code>{' '}
      <span className="cell-drift">
        <span aria-label="drift">⚠</span> {cell.version}
      </span>{' '}
      in {environmentLabel({ ...cell.environment, pullRequest: cell.pullRequest, build: cell.build })}
      {cell.since !== '' && <span className="drift-since">, {cell.since}</span>}
    </li>
  );
}
