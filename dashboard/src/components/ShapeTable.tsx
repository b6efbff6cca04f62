import type { JsonSchema } from '@spectator/shared';
import { useMemo } from 'react';
import { schemaRows } from '../lib/schema-rows';
import { Badge } from './badges';

/**
 * A body's shape as a tree table: field, type, and the optional / nullable / format markers.
 * Shapes never hold values, so none can be shown. `highlight` marks the JSON paths that changed.
 */
export function ShapeTable({
  schema,
  caption,
  highlight,
}: {
  schema: JsonSchema | null | undefined;
  caption?: string;
  highlight?: ReadonlySet<string>;
}) {
  const rows = useMemo(() => schemaRows(schema), [schema]);
  if (!schema) return <p className="muted">No JSON shape recorded for this body.</p>;
  if (rows.length === 0) return <p className="muted">An object without fields.</p>;
  return (
    <table className="shape-table">
      {caption && <caption>{caption}</caption>}
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Type</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.path} className={highlight?.has(row.path) ? 'changed' : undefined} data-path={row.path}>
            <td>
              <span className="field-name" style={{ paddingInlineStart: `${row.depth * 1.25}rem` }}>
                {row.depth > 0 && (
                  <span className="tree-mark" aria-hidden="true">
                    └{' '}
                  </span>
                )}
                {row.name}
              </span>
            </td>
            <td>
              <span className="type">{row.type}</span>
              {row.format && <Badge tone="info">{row.format}</Badge>}
              {row.optional && <Badge title="Missing from some observed bodies">optional</Badge>}
              {row.nullable && <Badge title="null was seen besides the type">nullable</Badge>}
              {row.truncated && (
                <Badge tone="warn" title="Cut short by a limit of the agent">
                  truncated
                </Badge>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
