import type { BlastRadiusResponse, ConsumerUse } from '@spectator/shared';
import { formatCount, formatPercent } from '../lib/format';
import { KIND_LABELS } from '../lib/versions';
import { EndpointName } from './badges';
import { ListTable } from './forms';
import { TimeAgo } from './TimeAgo';

/** A consumer's cells in a list: label (else pseudonym), calls, share, last call. */
export function ConsumerCells({ use }: { use: ConsumerUse }) {
  return (
    <>
      <td>{use.label ?? <code>{use.consumer}</code>}</td>
      <td className="num">{formatCount(use.calls)}</td>
      <td className="num">{formatPercent(use.share)}</td>
      <td>
        <TimeAgo at={use.lastCall} />
      </td>
    </>
  );
}

/** Who breaking changes (a proposal's, a capture's diffs) break in production: per broken part, its consumers of the last 30 days. */
export function BlastRadius({ radius }: { radius: BlastRadiusResponse }) {
  if (radius.parts.length === 0) return <p className="muted">No breaking change.</p>;
  return (
    <>
      <p className="muted" role="status">
        {radius.consumers.length === 0 && radius.otherCalls === 0
          ? `No named consumer called a broken part in ${KIND_LABELS[radius.environment]} in the last ${radius.days} days.`
          : `${radius.consumers.length} consumer${radius.consumers.length === 1 ? '' : 's'} called a broken part in ${KIND_LABELS[radius.environment]} in the last ${radius.days} days.`}
        {radius.otherCalls > 0 && ` ${formatCount(radius.otherCalls)} calls by consumers past an agent's bound.`}
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
              <ConsumerCells use={c} />
            </tr>
          ));
        })}
      </ListTable>
    </>
  );
}
