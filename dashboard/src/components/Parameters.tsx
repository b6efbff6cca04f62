import type { ParametersDoc } from '@spectator/shared';
import { Badge } from './badges';
import { ListTable } from './forms';

/**
 * An endpoint's documented query parameters and request headers: names and whether they are
 * required, never values. A version that does not document them says so, so "none" and "not
 * documented" are not confused.
 */
export function DocumentedParameters({ parameters }: { parameters: ParametersDoc | null }) {
  const rows = parameters
    ? [
        ...parameters.query.map((p) => ({ ...p, in: 'query' })),
        ...parameters.headers.map((p) => ({ ...p, in: 'header' })),
      ]
    : [];
  return (
    <section className="body-card" aria-label="Parameters">
      <h3>Query parameters and headers</h3>
      {parameters === null ? (
        <p className="muted">Not documented in this version.</p>
      ) : rows.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <ListTable
          columns={[{ label: 'Name' }, { label: 'In' }, { label: 'Required' }]}
          className="list-table parameters-table"
        >
          {rows.map((row) => (
            <tr key={`${row.in} ${row.name}`}>
              <td>
                <code>{row.name}</code>
              </td>
              <td>{row.in}</td>
              <td>{row.required ? <Badge tone="info">required</Badge> : <span className="muted">optional</span>}</td>
            </tr>
          ))}
        </ListTable>
      )}
    </section>
  );
}
