import type { BlastRadiusResponse } from '@spectator/shared';
import { formatCount, formatPercent } from '../lib/format';
import { KIND_LABELS } from '../lib/versions';
import { EndpointName } from './badges';
import { ListTable } from './forms';
import { TimeAgo } from './TimeAgo';

/** Who a proposal's breaking changes break in production: per broken part, its consumers of the last 30 days. */
export function BlastRadius({ radius }: { radius: BlastRadiusResponse }) {
  if (radius.parts.length === 0) return <p className="muted">No breaking change.</p>;
  return (
    <>
      <p className="muted" role="status">
        {radius.consumers.length === 0 && radius.otherCalls === 0
          ? `No named consumer called a broken part in ${KIND_LABELS[radius.environment]} in the last ${radius.days} days.`
          : `${radius.consumers.length} consumer${radius.consumers.length === 1 ? '' : 's'} called a broken part in ${KIND_LABELS[radius.environment]} in the last ${radius.days} days.`}
      </p>
      <ListTable
        testId="blast-radius"
        columns={[
          { label: 'Part' },
          { label: 'Consumer' },
          { label: 'Calls', numeric: true },
          { label: 'Share', numeric: true },
          { label: 'Last call' },
        ]}
      >
        {radius.parts.flatMap((part) => {
          const name = (
            <>
              <EndpointName method={part.method} path={part.path} /> {part.status ?? 'any status'}
            </>
          );
          if (part.consumers.length === 0)
            return [
              <tr key={`${part.method} ${part.path} ${part.status}`}>
                <td>{name}</td>
                <td className="muted">none named ({formatCount(part.calls)} calls counted)</td>
                <td className="num">—</td>
                <td className="num">—</td>
                <td>—</td>
              </tr>,
            ];
          return part.consumers.map((c) => (
            <tr key={`${part.method} ${part.path} ${part.status} ${c.consumer}`}>
              <td>{name}</td>
              <td>{c.label ?? <code>{c.consumer}</code>}</td>
              <td className="num">{formatCount(c.calls)}</td>
              <td className="num">{formatPercent(c.share)}</td>
              <td>
                <TimeAgo at={c.lastCall} />
              </td>
            </tr>
          ));
        })}
      </ListTable>
    </>
  );
}
