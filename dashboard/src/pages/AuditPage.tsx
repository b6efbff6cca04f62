import { AUDIT_ACTIONS, type AuditEventResponse } from '@spectator/shared';
import { useState } from 'react';
import { ListTable } from '../components/forms';
import { Async, Empty } from '../components/states';
import { useApp } from '../hooks/app';
import { useResource } from '../hooks/resource';
import { formatTime } from '../lib/format';

const PAGE = 50;

/** Who: a person (name, email, provider subject), a token, or Spectator itself (evidence). */
function ActorCell({ actor }: { actor: AuditEventResponse['actor'] }) {
  if (actor.kind === 'system') return <span className="muted">Spectator (evidence)</span>;
  if (actor.kind === 'token') return <span title={`token ${actor.id ?? ''}`}>token “{actor.name}”</span>;
  return <span title={actor.subject ? `subject ${actor.subject}` : undefined}>{actor.name ?? actor.email}</span>;
}

function detailsText(event: AuditEventResponse): string {
  const text = Object.entries(event.details)
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' · ');
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** The audit log: who did what in the project, newest first, filtered by action and actor, a page at a time. */
export function AuditPage() {
  const { api, project } = useApp();
  const [action, setAction] = useState('');
  const [actor, setActor] = useState('');
  const [pages, setPages] = useState<string[]>([]);
  const before = pages[pages.length - 1];
  const audit = useResource(
    () =>
      api.audit(project, {
        limit: PAGE,
        ...(before ? { before } : {}),
        ...(action ? { action } : {}),
        ...(actor.trim() ? { actor: actor.trim() } : {}),
      }),
    [api, project, before, action, actor],
  );
  return (
    <div className="page">
      <h1>Audit</h1>
      <form className="inline-form" onSubmit={(e) => e.preventDefault()}>
        <label>
          Action
          <select
            value={action}
            onChange={(e) => {
              setAction(e.target.value);
              setPages([]);
            }}
          >
            <option value="">any</option>
            {AUDIT_ACTIONS.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Actor <span className="muted">(email, subject or id)</span>
          <input
            value={actor}
            onChange={(e) => {
              setActor(e.target.value);
              setPages([]);
            }}
          />
        </label>
      </form>
      <Async resource={audit} what="the audit log">
        {(page) =>
          page.events.length === 0 ? (
            <Empty title="Nothing recorded" />
          ) : (
            <>
              <ListTable
                testId="audit"
                columns={[
                  { label: 'When' },
                  { label: 'Who' },
                  { label: 'What' },
                  { label: 'On' },
                  { label: 'Details' },
                ]}
              >
                {page.events.map((event) => (
                  <tr key={event.id}>
                    <td>{formatTime(event.at)}</td>
                    <td>
                      <ActorCell actor={event.actor} />
                    </td>
                    <td>
                      <code>{event.action}</code>
                    </td>
                    <td>
                      <code>{event.target ?? ''}</code>
                    </td>
                    <td className="muted">{detailsText(event)}</td>
                  </tr>
                ))}
              </ListTable>
              <div className="pager">
                <button type="button" disabled={pages.length === 0} onClick={() => setPages(pages.slice(0, -1))}>
                  Newer
                </button>
                <button
                  type="button"
                  disabled={page.next === null}
                  onClick={() => page.next && setPages([...pages, page.next])}
                >
                  Older
                </button>
              </div>
            </>
          )
        }
      </Async>
    </div>
  );
}
