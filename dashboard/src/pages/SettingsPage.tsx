import {
  ENVIRONMENT_KINDS,
  WEBHOOK_FORMATS,
  type AgentResponse,
  type EnvironmentKind,
  type TokenResponse,
  type TokenScope,
  type WebhookFormat,
} from '@spectator/shared';
import { useState, type FormEvent, type ReactNode } from 'react';
import { Badge } from '../components/badges';
import { FormError, InlineTextForm, ListTable, ShownOnce } from '../components/forms';
import { Async, Empty } from '../components/states';
import { TimeAgo } from '../components/TimeAgo';
import { useAction } from '../hooks/action';
import { useApp } from '../hooks/app';
import { useResource } from '../hooks/resource';
import { environmentLabel, formatTime, shortCommit, timeAgo } from '../lib/format';
import { ScopeNote, useScopeAllows } from '../components/Permission';
import { MembersSection } from './MembersSection';

const SCOPES: readonly TokenScope[] = ['read', 'write', 'admin', 'agent'];

/** Settings of the project: agents seen, members and roles, tokens, ignore rules in effect, webhooks. */
export function SettingsPage() {
  return (
    <div className="page">
      <h1>Settings</h1>
      <AgentsSection />
      <AdminSection title="Members" action="Managing members and roles">
        <MembersSection />
      </AdminSection>
      <AdminSection title="Tokens" action="Managing tokens">
        <TokensSection />
      </AdminSection>
      <RulesSection />
      <AdminSection title="Webhooks" action="Managing webhooks">
        <WebhooksSection />
      </AdminSection>
    </div>
  );
}

/** A section only an admin token can use: for other tokens, its title and the scope it needs (nothing is fetched). */
function AdminSection({ title, action, children }: { title: string; action: string; children: ReactNode }) {
  const titleId = `${title.toLowerCase()}-title`;
  if (useScopeAllows('admin')) return <>{children}</>;
  return (
    <section className="card" aria-labelledby={titleId}>
      <h2 id={titleId}>{title}</h2>
      <ScopeNote scope="admin" action={action} />
    </section>
  );
}

/** Where an agent runs: its environment, with the pull request or build of its current capture. */
function agentWhere(agent: AgentResponse): string {
  return environmentLabel({
    kind: agent.environment.kind,
    name: agent.environment.name,
    pullRequest: agent.pullRequest,
    build: agent.build,
  });
}

function AgentsSection() {
  const { api, project } = useApp();
  const agents = useResource(
    () => api.agents(project),
    [api, project],
    (e) => e.type === 'capture.started' || e.type === 'capture.updated' || e.type === 'agent.connection',
  );
  return (
    <section className="card" aria-labelledby="agents-title">
      <h2 id="agents-title">Agents seen</h2>
      <Async resource={agents} what="agents">
        {(list) =>
          list.length === 0 ? (
            <Empty title="No agent has connected yet">Create an agent token below and start the agent with it.</Empty>
          ) : (
            <ListTable
              columns={[
                { label: 'Environment' },
                { label: 'Commit' },
                { label: 'Build' },
                { label: 'Last seen' },
                { label: 'Connection' },
              ]}
            >
              {list.map((agent) => (
                <tr key={agent.id}>
                  <td>{agentWhere(agent)}</td>
                  <td>
                    <code>{shortCommit(agent.commit)}</code>
                  </td>
                  <td>{agent.build ?? '—'}</td>
                  <td>
                    <TimeAgo at={agent.lastSeen} />
                  </td>
                  <td>{agent.connected ? <Badge tone="ok">connected</Badge> : <Badge>not connected</Badge>}</td>
                </tr>
              ))}
            </ListTable>
          )
        }
      </Async>
    </section>
  );
}

/** Lifetimes offered for a new token, in days (0: never expires). */
const TOKEN_LIFETIMES: ReadonlyArray<readonly [number, string]> = [
  [0, 'never'],
  [7, 'in 7 days'],
  [30, 'in 30 days'],
  [90, 'in 90 days'],
  [365, 'in a year'],
];

function isExpired(token: TokenResponse): boolean {
  return token.expiresAt !== null && Date.parse(token.expiresAt) <= Date.now();
}

function TokensSection() {
  const { api, project } = useApp();
  const tokens = useResource(() => api.tokens(project), [api, project]);
  const [name, setName] = useState('');
  const [scope, setScope] = useState<TokenScope>('read');
  const [environments, setEnvironments] = useState<EnvironmentKind[]>([]);
  const [lifetimeDays, setLifetimeDays] = useState(0);
  const [created, setCreated] = useState<TokenResponse | null>(null);
  const { error, run } = useAction();

  const create = async (event: FormEvent) => {
    event.preventDefault();
    const token = await run(() =>
      api.createToken(project, {
        name: name.trim(),
        scope,
        ...(scope === 'agent' && environments.length ? { environments } : {}),
        ...(lifetimeDays > 0 ? { expiresAt: new Date(Date.now() + lifetimeDays * 86_400_000).toISOString() } : {}),
      }),
    );
    if (!token) return;
    setCreated(token);
    setName('');
    tokens.reload();
  };
  const revoke = async (token: TokenResponse) => {
    if (!window.confirm(`Revoke the token "${token.name}"? Whatever uses it stops working.`)) return;
    if ((await run(() => api.revokeToken(project, token.id))) !== undefined) tokens.reload();
  };

  return (
    <section className="card" aria-labelledby="tokens-title">
      <h2 id="tokens-title">Tokens</h2>
      {created?.token && (
        <ShownOnce label="New token" value={created.token} onDone={() => setCreated(null)}>
          New token <strong>{created.name}</strong> — copy it now, it is not shown again:
          <TokenUse scope={created.scope} />
        </ShownOnce>
      )}
      <Async resource={tokens} what="tokens">
        {(list) =>
          list.length === 0 ? (
            <Empty title="No tokens" />
          ) : (
            <ListTable
              columns={[
                { label: 'Name' },
                { label: 'Scope' },
                { label: 'Created' },
                { label: 'Created by' },
                { label: 'Last used' },
                { label: 'Expires' },
                { label: 'Actions', hidden: true },
              ]}
            >
              {list.map((token) => (
                <tr key={token.id} className={token.revokedAt || isExpired(token) ? 'revoked' : undefined}>
                  <td>{token.name}</td>
                  <td>
                    <Badge>{token.scope}</Badge> {token.environments?.join(', ')}
                  </td>
                  <td>{formatTime(token.createdAt)}</td>
                  <td>
                    {token.createdBy ? (
                      <span title={token.createdBy.email ?? undefined}>
                        {token.createdBy.name ?? token.createdBy.email}
                      </span>
                    ) : (
                      <span className="muted">a token</span>
                    )}
                  </td>
                  <td>
                    <TimeAgo at={token.lastUsedAt} />
                  </td>
                  <td>
                    {token.expiresAt === null ? (
                      <span className="muted">never</span>
                    ) : isExpired(token) ? (
                      `expired ${formatTime(token.expiresAt)}`
                    ) : (
                      formatTime(token.expiresAt)
                    )}
                  </td>
                  <td>
                    {token.revokedAt ? (
                      <span className="muted">
                        revoked <TimeAgo at={token.revokedAt} />
                      </span>
                    ) : isExpired(token) ? null : (
                      <button type="button" className="danger" onClick={() => revoke(token)}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </ListTable>
          )
        }
      </Async>
      <form className="inline-form" onSubmit={create}>
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} required placeholder="e.g. staging agent" />
        </label>
        <label>
          Scope
          <select value={scope} onChange={(e) => setScope(e.target.value as TokenScope)}>
            {SCOPES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        {scope === 'agent' && (
          <fieldset className="checkbox-group">
            <legend>Environments it may report</legend>
            {ENVIRONMENT_KINDS.map((kind) => (
              <label key={kind} className="checkbox">
                <input
                  type="checkbox"
                  checked={environments.includes(kind)}
                  onChange={(e) =>
                    setEnvironments((current) =>
                      e.target.checked ? [...current, kind] : current.filter((k) => k !== kind),
                    )
                  }
                />
                {kind}
              </label>
            ))}
          </fieldset>
        )}
        <label>
          Expires
          <select value={lifetimeDays} onChange={(e) => setLifetimeDays(Number(e.target.value))}>
            {TOKEN_LIFETIMES.map(([days, label]) => (
              <option key={days} value={days}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Create token</button>
      </form>
      <FormError error={error} />
    </section>
  );
}

/** What a new token is for, and where it goes. */
function TokenUse({ scope }: { scope: TokenScope }) {
  if (scope === 'agent')
    return (
      <span className="muted small token-use">
        Give it to the agent: <code>spectator-agent --backend {window.location.origin} --token …</code> (or{' '}
        <code>SPECTATOR_TOKEN</code>). In CI it is the <code>SPECTATOR_TOKEN</code> secret.
      </span>
    );
  return (
    <span className="muted small token-use">
      Sign in to the dashboard with it
      {scope === 'read' ? (
        <>
          , or let CI&apos;s gate ask with it: <code>spectator-agent check --token …</code> (the{' '}
          <code>SPECTATOR_READ_TOKEN</code> secret)
        </>
      ) : null}
      .
    </span>
  );
}

/** The rules in effect are the ones the newest capture's agent reported (it watches service.yml). */
function RulesSection() {
  const { api, project } = useApp();
  const captures = useResource(
    () => api.captures(project),
    [api, project],
    (e) => e.type === 'capture.started' || e.type === 'capture.updated',
  );
  return (
    <section className="card" aria-labelledby="rules-title">
      <h2 id="rules-title">Ignore rules in effect</h2>
      <p className="muted">
        From <code>ignoreRequests</code> in the agent&apos;s <code>service.yml</code>. Matching traffic is not captured
        and never shows here; a change takes effect on the next reload.
      </p>
      <Async resource={captures} what="ignore rules">
        {(list) => {
          const newest = list[0];
          if (!newest) return <Empty title="No agent has reported rules yet" />;
          if (newest.rules.length === 0) return <Empty title="No ignore rules">All traffic is observed.</Empty>;
          return (
            <>
              <p className="muted small">
                As reported for the capture of{' '}
                {environmentLabel({ ...newest, kind: newest.environment.kind, name: newest.environment.name })} started{' '}
                <TimeAgo at={newest.startedAt} />.
              </p>
              <ul className="rules">
                {newest.rules.map((rule) => (
                  <li key={rule}>
                    <code>{rule}</code>
                  </li>
                ))}
              </ul>
            </>
          );
        }}
      </Async>
    </section>
  );
}

/** How each webhook format is named in the dashboard. */
const WEBHOOK_FORMAT_LABELS: Readonly<Record<WebhookFormat, string>> = {
  json: 'JSON',
  slack: 'Slack (Block Kit)',
  teams: 'Microsoft Teams (Adaptive Card)',
};

function WebhooksSection() {
  const { api, project } = useApp();
  const webhooks = useResource(() => api.webhooks(project), [api, project]);
  const [url, setUrl] = useState('');
  const [format, setFormat] = useState<WebhookFormat>('json');
  const [secret, setSecret] = useState<string | null>(null);
  const { error, run } = useAction();
  const act = async (action: () => Promise<unknown>) => {
    if ((await run(action)) !== undefined) webhooks.reload();
  };

  return (
    <section className="card" aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">Webhooks</h2>
      <p className="muted">
        Each proposal step, each change of the version running in an environment (breaking changes and drift marked) and
        each undocumented endpoint new in production is POSTed signed with HMAC-SHA256: as JSON, or as a Slack or
        Microsoft Teams message for a channel&apos;s incoming webhook.
      </p>
      {secret && (
        <ShownOnce label="Signing secret" value={secret} onDone={() => setSecret(null)}>
          Signing secret — copy it now, it is not shown again:
        </ShownOnce>
      )}
      <Async resource={webhooks} what="webhooks">
        {(list) =>
          list.length === 0 ? (
            <Empty title="No webhooks" />
          ) : (
            <ul className="plain-list">
              {list.map((hook) => (
                <li key={hook.id} className="row spread">
                  <code>{hook.url}</code>
                  <Badge tone="neutral">{WEBHOOK_FORMAT_LABELS[hook.format]}</Badge>
                  <LastDelivery webhookId={hook.id} />
                  <button
                    type="button"
                    className="danger"
                    onClick={() =>
                      window.confirm(`Delete the webhook to ${hook.url}?`) &&
                      act(() => api.deleteWebhook(project, hook.id))
                    }
                  >
                    Delete
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Async>
      <InlineTextForm
        label="URL"
        type="url"
        value={url}
        onChange={setUrl}
        placeholder="https://example.com/hooks/spectator"
        submitLabel="Add webhook"
        onSubmit={() =>
          act(async () => {
            const created = await api.createWebhook(project, { url: url.trim(), format });
            setUrl('');
            if (created.secret) setSecret(created.secret);
          })
        }
      >
        <label>
          Format
          <select value={format} onChange={(e) => setFormat(e.target.value as WebhookFormat)}>
            {WEBHOOK_FORMATS.map((value) => (
              <option key={value} value={value}>
                {WEBHOOK_FORMAT_LABELS[value]}
              </option>
            ))}
          </select>
        </label>
      </InlineTextForm>
      <FormError error={error} />
    </section>
  );
}

/** The newest entry of a webhook's delivery log: delivered, pending (with its retry) or failed. */
function LastDelivery({ webhookId }: { webhookId: string }) {
  const { api, project } = useApp();
  const deliveries = useResource(
    () => api.webhookDeliveries(project, webhookId, 1),
    [api, project, webhookId],
    (e) => e.type === 'proposal.step' || e.type === 'version.changed',
  );
  if (deliveries.state !== 'ready')
    return (
      <span className="muted small">{deliveries.state === 'loading' ? 'deliveries…' : 'delivery log unavailable'}</span>
    );
  const last = deliveries.data[0];
  if (!last) return <span className="muted small">no delivery yet</span>;
  const outcome =
    last.status === 'delivered'
      ? `delivered ${timeAgo(last.deliveredAt)}`
      : last.status === 'pending'
        ? // Why it is retrying: a receiver that is down looked the same as one that is merely slow.
          `pending, ${last.attempts} attempt${last.attempts === 1 ? '' : 's'}${last.lastError ? ` (last: ${last.lastError})` : ''}${last.nextAttemptAt ? `, next ${formatTime(last.nextAttemptAt)}` : ''}`
        : `failed after ${last.attempts} attempts (${last.lastStatus ?? last.lastError ?? 'no answer'})`;
  return (
    <span className="muted small" title={formatTime(last.createdAt)}>
      <Badge tone={last.status === 'delivered' ? 'ok' : last.status === 'pending' ? 'warn' : 'danger'}>
        {last.type}
      </Badge>{' '}
      {outcome}
    </span>
  );
}
