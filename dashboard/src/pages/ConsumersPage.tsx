import {
  CONSUMER_ID_PATTERN,
  DEFAULT_CONSUMER_DAYS,
  type ConsumersResponse,
  type EndpointConsumersResponse,
} from '@spectator/shared';
import { EndpointName } from '../components/badges';
import { ConsumerCells } from '../components/BlastRadius';
import { useState } from 'react';
import { ALL_ENVIRONMENTS, dayWindows, useEnvironmentWindow } from '../components/EnvironmentWindow';
import { FormError, ListTable } from '../components/forms';
import { NeedsScope, useScopeAllows } from '../components/Permission';
import { Async, Empty } from '../components/states';
import { TimeAgo } from '../components/TimeAgo';
import { useAction } from '../hooks/action';
import { useApp } from '../hooks/app';
import { useResource } from '../hooks/resource';
import { formatCount, formatPercent } from '../lib/format';
import { routeHref } from '../lib/routes';
import { KIND_LABELS } from '../lib/versions';

const WINDOWS = dayWindows([7, DEFAULT_CONSUMER_DAYS, 90, 400]);

/**
 * A pseudonym's label, editable in place: the team's name for a consumer ("mobile app 5.x"), kept
 * per project. Saving an empty label removes it.
 */
function LabelEditor({ consumer, label, onSaved }: { consumer: string; label: string | null; onSaved: () => void }) {
  const { api, project } = useApp();
  const [text, setText] = useState(label ?? '');
  const { busy, error, run } = useAction();
  const may = useScopeAllows('write');
  if (!may) return <span>{label ?? <span className="muted">unnamed</span>}</span>;
  const save = async () => {
    const trimmed = text.trim();
    if (trimmed === (label ?? '')) return;
    const done = await run(() =>
      trimmed === '' ? api.unlabelConsumer(project, consumer) : api.labelConsumer(project, consumer, trimmed),
    );
    if (done !== undefined) onSaved();
  };
  return (
    <form
      className="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <label>
        <span className="visually-hidden">Label of {consumer}</span>
        <input
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder="e.g. mobile app 5.x"
          maxLength={200}
        />
      </label>
      <button type="submit" disabled={busy}>
        Save
      </button>
      <FormError error={error} />
    </form>
  );
}

/** Labels a pseudonym not seen yet (computed with `spectator-agent consumer-id`). */
function LabelNew({ onSaved }: { onSaved: () => void }) {
  const { api, project } = useApp();
  const [consumer, setConsumer] = useState('');
  const [label, setLabel] = useState('');
  const { busy, error, run } = useAction();
  const valid = CONSUMER_ID_PATTERN.test(consumer.trim());
  return (
    <form
      className="inline-form"
      aria-label="Label a pseudonym"
      onSubmit={(event) => {
        event.preventDefault();
        void run(() => api.labelConsumer(project, consumer.trim(), label.trim())).then((done) => {
          if (done === undefined) return;
          setConsumer('');
          setLabel('');
          onSaved();
        });
      }}
    >
      <label>
        Pseudonym
        <input
          value={consumer}
          onChange={(e) => setConsumer(e.target.value)}
          placeholder="16 hex digits"
          required
          pattern="[0-9a-f]{16}"
        />
      </label>
      <label>
        Label
        <input value={label} onChange={(e) => setLabel(e.target.value)} required maxLength={200} />
      </label>
      <button type="submit" disabled={busy || !valid || label.trim() === ''}>
        Add label
      </button>
      <FormError error={error} />
    </form>
  );
}

function ConsumerTable({ list, reload }: { list: ConsumersResponse; reload: () => void }) {
  if (list.consumers.length === 0 && list.unseen.length === 0)
    return (
      <Empty title="No consumers named">
        Agents name consumers when started with <code>--consumer</code> (docs/agent.md, Consumers).
      </Empty>
    );
  return (
    <>
      <p className="muted" role="status">
        {formatCount(list.calls)} calls since {list.since}
        {list.build === null ? '' : ` in build ${list.build}`} by agents that name consumers
        {list.otherCalls > 0 ? `, ${formatCount(list.otherCalls)} of them by consumers past an agent's bound` : ''}.
      </p>
      <ListTable
        testId="consumers"
        columns={[
          { label: 'Label' },
          { label: 'Pseudonym' },
          { label: 'Calls', numeric: true },
          { label: 'Share', numeric: true },
          { label: 'Endpoints', numeric: true, wideOnly: true },
          { label: 'Last call' },
        ]}
      >
        {[...list.consumers, ...list.unseen].map((c) => {
          const seen = 'calls' in c;
          return (
            <tr key={c.consumer}>
              <td>
                <LabelEditor consumer={c.consumer} label={c.label} onSaved={reload} />
              </td>
              <td>
                <code>{c.consumer}</code>
              </td>
              <td className="num">{seen ? formatCount(c.calls) : 0}</td>
              <td className="num">{seen ? formatPercent(c.share) : '—'}</td>
              <td className="num wide-only">{seen ? formatCount(c.endpoints) : 0}</td>
              {seen ? (
                <td>
                  <TimeAgo at={c.lastCall} />
                </td>
              ) : (
                <td className="muted">no call in the window</td>
              )}
            </tr>
          );
        })}
      </ListTable>
    </>
  );
}

/** The picker of a consumer question: an environment (production first), one of its builds, a window in days. */
const consumerWindow = {
  environment: 'production',
  windows: WINDOWS,
  window: String(DEFAULT_CONSUMER_DAYS),
  builds: true,
} as const;

/** One endpoint's callers: per status, each consumer's calls, share and last call. */
function EndpointConsumerTable({ answer, everywhere }: { answer: EndpointConsumersResponse; everywhere: boolean }) {
  if (answer.rows.length === 0)
    return (
      <Empty title="No calls counted">
        No agent naming consumers saw this endpoint here in the window (agents name consumers with{' '}
        <code>--consumer</code>).
      </Empty>
    );
  return (
    <>
      {answer.rows.map((row) => {
        const named = row.consumers.reduce((sum, c) => sum + c.calls, 0);
        const unnamed = row.calls - named - row.otherCalls;
        return (
          <section
            key={`${row.environment} ${row.status}`}
            aria-label={`${KIND_LABELS[row.environment]} ${row.status}`}
          >
            <h2>{everywhere ? `${KIND_LABELS[row.environment]} · status ${row.status}` : `Status ${row.status}`}</h2>
            <p className="muted" role="status">
              {formatCount(row.calls)} calls
              {row.otherCalls > 0 ? `, ${formatCount(row.otherCalls)} by consumers past an agent's bound` : ''}
              {unnamed > 0 ? `, ${formatCount(unnamed)} by clients no source named` : ''}.
            </p>
            <ListTable
              testId={
                everywhere ? `endpoint-consumers-${row.environment}-${row.status}` : `endpoint-consumers-${row.status}`
              }
              columns={[
                { label: 'Consumer' },
                { label: 'Calls', numeric: true },
                { label: 'Share', numeric: true },
                { label: 'Last call' },
              ]}
            >
              {row.consumers.map((c) => (
                <tr key={c.consumer}>
                  <ConsumerCells use={c} />
                </tr>
              ))}
            </ListTable>
          </section>
        );
      })}
    </>
  );
}

/** Who calls one endpoint (issue 19), by status, per environment and window. */
export function EndpointConsumersPage({ endpointId }: { endpointId: string }) {
  const { api, project } = useApp();
  const picked = useEnvironmentWindow({ ...consumerWindow, label: 'Calls of', allEnvironments: true });
  const { environment, build, windowId } = picked;
  const everywhere = environment === ALL_ENVIRONMENTS;
  const answer = useResource(
    () =>
      api.endpointConsumers(project, endpointId, {
        ...(everywhere ? {} : { environment }),
        ...(build === null ? {} : { build }),
        days: Number(windowId),
      }),
    [api, project, endpointId, environment, build, windowId],
  );
  return (
    <div className="page">
      <Async resource={answer} what="the endpoint's consumers">
        {(found) => (
          <>
            <h1>
              Who calls <EndpointName method={found.endpoint.method} path={found.endpoint.path} />
            </h1>
            <p className="muted">
              <a href={routeHref({ page: 'consumers', project })}>All consumers</a> ·{' '}
              <a href={routeHref({ page: 'docs', project, endpointId })}>Documentation</a>
            </p>
            {picked.form}
            <EndpointConsumerTable answer={found} everywhere={everywhere} />
          </>
        )}
      </Async>
    </div>
  );
}

/**
 * Consumers: who calls the API, by pseudonym (the agents never send who it is) and by the labels a
 * team gives them, per environment and window.
 */
export function ConsumersPage() {
  const { api, project } = useApp();
  const picked = useEnvironmentWindow({ ...consumerWindow, label: 'Consumers of' });
  const { environment, build, windowId } = picked;
  const consumers = useResource(
    () => api.consumers(project, { environment, ...(build === null ? {} : { build }), days: Number(windowId) }),
    [api, project, environment, build, windowId],
  );
  return (
    <div className="page">
      <h1>Consumers</h1>
      <p className="muted">
        Agents started with <code>--consumer</code> name each request&apos;s consumer by a pseudonym; the token, key or
        certificate it comes from never leaves them. Compute your own clients&apos; pseudonyms with{' '}
        <code>spectator-agent consumer-id</code> and name them here.
      </p>
      {picked.form}
      <Async resource={consumers} what="the consumers">
        {(list) => <ConsumerTable list={list} reload={consumers.reload} />}
      </Async>
      <h2>Label a pseudonym</h2>
      <NeedsScope scope="write" action="Labelling consumers">
        <LabelNew onSaved={consumers.reload} />
      </NeedsScope>
    </div>
  );
}
