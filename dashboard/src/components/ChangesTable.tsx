import type { ChangeResponse } from '@spectator/shared';
import { changePlaceLabel } from '../lib/format';
import { schemaTypeLabel } from '../lib/schema-rows';
import { BreakingBadge } from './badges';
import { ListTable } from './forms';

function describe(schema: ChangeResponse['documented']): string {
  return schema
    ? schemaTypeLabel(schema) + (schema.oneOf?.some((option) => option.type === 'null') ? ' (nullable)' : '')
    : '—';
}

/**
 * The changes of a diff or a proposal, documented and observed side by side at each changed field
 * (or query parameter / request header, by name), breaking ones marked. Used by Review (diffs),
 * Proposals, the version history and the comparison of environments (whose two sides are two
 * versions: `sides` names them), so all read the same.
 */
export function ChangesTable({
  changes,
  sides = ['Documented', 'Observed'],
}: {
  changes: ChangeResponse[];
  sides?: readonly [string, string];
}) {
  if (changes.length === 0) return <p className="muted">No shape changes.</p>;
  return (
    <ListTable
      columns={[
        { label: 'Where' },
        { label: 'Field' },
        { label: 'Change' },
        { label: sides[0] },
        { label: sides[1] },
        { label: 'Impact' },
      ]}
      className="changes-table"
    >
      {changes.map((change, index) => (
        <tr
          key={`${change.in} ${change.status ?? ''} ${change.at} ${index}`}
          className={change.breaking ? 'breaking' : undefined}
        >
          <td>{changePlaceLabel(change.in, change.status)}</td>
          <td>
            <code>{change.at}</code>
          </td>
          <td>{change.change}</td>
          {/* The two sides of an optionality change have one type: say which side is optional ("now optional" read String | String). */}
          <td className="documented">
            {describe(change.documented)}
            {change.change === 'now required' && ', optional'}
          </td>
          <td className="observed">
            {describe(change.observed)}
            {change.change === 'now optional' && ', optional'}
          </td>
          <td>
            <BreakingBadge breaking={change.breaking} />
          </td>
        </tr>
      ))}
    </ListTable>
  );
}
