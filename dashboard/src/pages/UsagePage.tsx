import {
  type DeprecationLocation,
  type DeprecationRequest,
  type DeprecationResponse,
  type EndpointUsage,
  type NameLastSeen,
  type OrphansResponse,
  type SafeToRemoveResponse,
  type UsageResponse,
} from '@spectator/shared';
import { useState } from 'react';
import { Badge, EndpointName } from '../components/badges';
import { dayWindows, useEnvironmentWindow } from '../components/EnvironmentWindow';
import { FormError, ListTable } from '../components/forms';
import { useScopeAllows } from '../components/Permission';
import { Async, Empty } from '../components/states';
import { TextWithTimes, TimeAgo } from '../components/TimeAgo';
import { useAction } from '../hooks/action';
import { useApp } from '../hooks/app';
import { useResource } from '../hooks/resource';
import { plural } from '../lib/format';
import { navigate } from '../lib/routes';
import { KIND_LABELS } from '../lib/versions';

const WINDOWS = dayWindows([7, 30, 90, 365]);

const LOCATION_LABELS: Record<DeprecationLocation, string> = {
  endpoint: 'endpoint',
  query: 'query parameter',
  header: 'request header',
  request: 'request field',
  response: 'response field',
};

/** The part of an endpoint a mark or a zombie names: `the endpoint`, or `response field $.email`. */
function PartName({ location, name }: { location: DeprecationLocation; name: string }) {
  if (location === 'endpoint') return <>the endpoint</>;
  return (
    <>
      {LOCATION_LABELS[location]} <code>{name}</code>
    </>
  );
}

/** What one mark names, in words: `GET /users response field $.email`. */
function markLabel(mark: DeprecationRequest): string {
  const part = mark.location === 'endpoint' ? '' : ` ${LOCATION_LABELS[mark.location]} ${mark.name ?? ''}`;
  return `${mark.method} ${mark.path}${part}`;
}

/**
 * Whether a part is deprecated, and for editors (write) the button that marks or unmarks it; the
 * page reloads what a mark changes (`onChanged`).
 */
function DeprecationToggle({
  mark,
  deprecated,
  onChanged,
}: {
  mark: DeprecationRequest;
  deprecated: boolean;
  onChanged: () => void;
}) {
  const { api, project } = useApp();
  const may = useScopeAllows('write');
  const { busy, error, run } = useAction();
  const badge = deprecated ? <Badge tone="warn">deprecated</Badge> : null;
  if (!may) return badge;
  const toggle = async () => {
    const done = await run(async () => {
      await (deprecated ? api.unmarkDeprecated(project, mark) : api.markDeprecated(project, mark));
      return true;
    });
    if (done) onChanged();
  };
  return (
    <span className="deprecation-toggle">
      {badge}{' '}
      <button
        type="button"
        className="link"
        disabled={busy}
        aria-label={`${deprecated ? 'Undeprecate' : 'Deprecate'} ${markLabel(mark)}`}
        onClick={() => void toggle()}
      >
        {deprecated ? 'Undeprecate' : 'Deprecate'}
      </button>
      <FormError error={error} />
    </span>
  );
}

/** One list of names of an endpoint (fields, parameters, headers) with when each was last seen. */
function NamesSeen({
  title,
  names,
  endpoint,
  location,
  onChanged,
}: {
  title: string;
  names: readonly NameLastSeen[];
  endpoint: EndpointUsage;
  /** Where a mark of these names goes; none for names that cannot be marked (response headers). */
  location?: Exclude<DeprecationLocation, 'endpoint'>;
  onChanged: () => void;
}) {
  if (names.length === 0) return null;
  return (
    <div className="usage-names">
      <h4>{title}</h4>
      <ul>
        {names.map((n) => (
          <li key={n.name}>
            <code>{n.name}</code> <TimeAgo at={n.lastSeen} />{' '}
            {location && (
              <DeprecationToggle
                mark={{ method: endpoint.method, path: endpoint.path, location, name: n.name }}
                deprecated={n.deprecated}
                onChanged={onChanged}
              />
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** An endpoint's parts by kind: each list's title, its names, and where a mark of one goes (none for statuses and response headers). */
function partLists(
  e: EndpointUsage,
): Array<[string, readonly NameLastSeen[], Exclude<DeprecationLocation, 'endpoint'> | undefined]> {
  return [
    [
      'Statuses',
      e.statuses.map((s) => ({ name: String(s.status), lastSeen: s.lastSeen, deprecated: false })),
      undefined,
    ],
    ['Query parameters', e.query, 'query'],
    ['Request headers', e.requestHeaders, 'header'],
    ['Request fields', e.requestFields, 'request'],
    ['Response fields', e.responseFields, 'response'],
    ['Response headers', e.responseHeaders, undefined],
  ];
}

/** Endpoints the Last seen table asks for at a time (the backend pages them by path, then method). */
const USAGE_PAGE = 100;

/**
 * Last seen per endpoint of one environment, each endpoint's parts behind a disclosure: the first
 * `shown` endpoints (`usage` holds one more when there are more), and a button for the next ones.
 */
function LastSeenTable({
  usage,
  shown,
  onMore,
  onChanged,
}: {
  usage: UsageResponse;
  shown: number;
  onMore: () => void;
  onChanged: () => void;
}) {
  if (usage.endpoints.length === 0)
    return (
      <Empty title={`Nothing documented or seen in ${KIND_LABELS[usage.environment]}`}>
        Agents report traffic with <code>--env {usage.environment}</code>.
      </Empty>
    );
  return (
    <>
      <ListTable
        testId="usage-last-seen"
        columns={[{ label: 'Endpoint' }, { label: 'Version' }, { label: 'Last seen' }, { label: 'Parts' }]}
      >
        {usage.endpoints.slice(0, shown).map((e) => {
          const parts = partLists(e).reduce((sum, [, names]) => sum + names.length, 0);
          const signalled = e.deprecationHeaders.deprecation !== null || e.deprecationHeaders.sunset !== null;
          return (
            <tr key={`${e.method} ${e.path}`}>
              <td>
                <EndpointName method={e.method} path={e.path} />{' '}
                <DeprecationToggle
                  mark={{ method: e.method, path: e.path, location: 'endpoint' }}
                  deprecated={e.deprecated}
                  onChanged={onChanged}
                />
                {signalled && (
                  <Badge tone="warn" title="The API answered it with a Deprecation or Sunset header">
                    Deprecation/Sunset header
                  </Badge>
                )}
                {e.deprecationHeaders.sunsetPast !== null && (
                  <Badge tone="danger" title="The API answered it with a Sunset date that had already passed">
                    past its Sunset date
                  </Badge>
                )}
              </td>
              <td>{e.version ?? <span className="muted">undocumented</span>}</td>
              <td>{e.lastSeen === null ? <span className="muted">never</span> : <TimeAgo at={e.lastSeen} />}</td>
              <td>
                {parts === 0 ? (
                  <span className="muted">—</span>
                ) : (
                  <details>
                    <summary>{plural(parts, 'part')}</summary>
                    {partLists(e).map(([title, names, location]) => (
                      <NamesSeen
                        key={title}
                        title={title}
                        names={names}
                        endpoint={e}
                        {...(location ? { location } : {})}
                        onChanged={onChanged}
                      />
                    ))}
                  </details>
                )}
              </td>
            </tr>
          );
        })}
      </ListTable>
      {usage.endpoints.length > shown && (
        <button type="button" onClick={onMore}>
          Show {USAGE_PAGE} more endpoints
        </button>
      )}
    </>
  );
}

/** Orphans (documented, not seen in the window) and zombies (deprecated, still called). */
function OrphansAndZombies({ found, onChanged }: { found: OrphansResponse; onChanged: () => void }) {
  const where = `${KIND_LABELS[found.environment]}${found.build === null ? '' : ` build ${found.build}`}`;
  return (
    <>
      <section aria-labelledby="zombies-title">
        <h2 id="zombies-title">Zombies</h2>
        <p className="muted">
          Deprecated, and still called in {where} in the last {found.days} days.
        </p>
        {found.zombies.length === 0 ? (
          <Empty title="No zombies">Nothing deprecated was called in the window.</Empty>
        ) : (
          <ListTable
            testId="usage-zombies"
            columns={[{ label: 'Endpoint' }, { label: 'Part' }, { label: 'Last seen' }, { label: 'Why' }]}
          >
            {found.zombies.map((z) => (
              <tr key={`${z.method} ${z.path} ${z.location} ${z.name}`}>
                <td>
                  <EndpointName method={z.method} path={z.path} />
                </td>
                <td>
                  <PartName location={z.location} name={z.name} />
                </td>
                <td>
                  <TimeAgo at={z.lastSeen} />
                </td>
                <td>{z.why}</td>
              </tr>
            ))}
          </ListTable>
        )}
      </section>
      <section aria-labelledby="orphans-title">
        <h2 id="orphans-title">Orphans</h2>
        <p className="muted">
          Documented, and not seen in {where} in the last {found.days} days (since <TimeAgo at={found.since} />
          ).
        </p>
        {found.orphans.length === 0 ? (
          <Empty title="No orphans">Every documented endpoint was called in the window.</Empty>
        ) : (
          <ListTable
            testId="usage-orphans"
            columns={[{ label: 'Endpoint' }, { label: 'Version' }, { label: 'Last seen' }, { label: 'Deprecated' }]}
          >
            {found.orphans.map((o) => (
              <tr key={o.endpointId}>
                <td>
                  <EndpointName method={o.method} path={o.path} />
                </td>
                <td>{o.version}</td>
                <td>{o.lastSeen === null ? <span className="muted">never</span> : <TimeAgo at={o.lastSeen} />}</td>
                <td>
                  <DeprecationToggle
                    mark={{ method: o.method, path: o.path, location: 'endpoint' }}
                    deprecated={o.deprecated}
                    onChanged={onChanged}
                  />
                </td>
              </tr>
            ))}
          </ListTable>
        )}
      </section>
    </>
  );
}

/**
 * Proposes removing `endpoints` (one, or every one listed with the draft's words) and opens the
 * proposal made; editors only.
 */
function ProposeRemoval({
  endpoints,
  title,
  description,
  label,
  name,
}: {
  endpoints: ReadonlyArray<{ method: string; path: string }>;
  title: string;
  description: string;
  label: string;
  name: string;
}) {
  const { api, project } = useApp();
  const may = useScopeAllows('write');
  const { busy, error, run } = useAction();
  if (!may) return null;
  const propose = async () => {
    const made = await run(() => api.proposeRemoval(project, { title, description, endpoints }));
    if (made !== undefined) navigate({ page: 'proposals', project, proposalId: made.id });
  };
  return (
    <span>
      <button type="button" disabled={busy} aria-label={name} onClick={() => void propose()}>
        {busy ? 'Proposing…' : label}
      </button>
      <FormError error={error} />
    </span>
  );
}

/** What production did not call in the window, with the evidence, and the removal proposal drafted from it. */
function SafeToRemove({ safe }: { safe: SafeToRemoveResponse }) {
  if (safe.productionLastSeen === null || safe.endpoints.length === 0)
    return (
      <Empty title="Nothing is safe to remove">
        {safe.productionLastSeen === null
          ? 'No production traffic was ever reported: without evidence nothing is called unused.'
          : Date.parse(safe.productionLastSeen) < Date.parse(safe.since)
            ? `No production traffic in the last ${safe.days} days: without evidence nothing is called unused.`
            : `Production called every documented endpoint in the last ${safe.days} days.`}
      </Empty>
    );
  return (
    <>
      <ListTable
        testId="usage-safe-to-remove"
        columns={[
          { label: 'Endpoint' },
          { label: 'Version' },
          { label: 'Evidence' },
          { label: 'Remove', hidden: true },
        ]}
      >
        {safe.endpoints.map((e) => (
          <tr key={e.endpointId}>
            <td>
              <EndpointName method={e.method} path={e.path} />
            </td>
            <td>{e.version}</td>
            <td>
              <ul className="small">
                {e.evidence.map((line) => (
                  <li key={line}>
                    <TextWithTimes text={line} />
                  </li>
                ))}
              </ul>
            </td>
            <td>
              <ProposeRemoval
                endpoints={[e]}
                title={`Remove ${e.method} ${e.path}`}
                description={e.evidence.map((line) => `- ${line}`).join('\n')}
                label="Propose removal"
                name={`Propose removing ${e.method} ${e.path}`}
              />
            </td>
          </tr>
        ))}
      </ListTable>
      {safe.draft && (
        <details>
          <summary>Removal proposal draft: {safe.draft.title}</summary>
          <pre className="draft" data-testid="removal-draft">
            {safe.draft.description}
          </pre>
          <ProposeRemoval
            endpoints={safe.endpoints}
            title={safe.draft.title}
            description={safe.draft.description}
            label="Propose this removal"
            name={`Propose removing all ${safe.endpoints.length} endpoints`}
          />
        </details>
      )}
    </>
  );
}

/** Every deprecation mark, by a person or an OpenAPI import, whether or not traffic has the part. */
function MarksTable({ marks, onChanged }: { marks: readonly DeprecationResponse[]; onChanged: () => void }) {
  if (marks.length === 0)
    return (
      <Empty title="Nothing marked deprecated">
        Mark an endpoint or one of its parts above, or import OpenAPI with <code>deprecated: true</code>.
      </Empty>
    );
  return (
    <ListTable
      testId="usage-marks"
      columns={[
        { label: 'Endpoint' },
        { label: 'Part' },
        { label: 'By' },
        { label: 'Since' },
        { label: 'Mark', hidden: true },
      ]}
    >
      {marks.map((m) => (
        <tr key={`${m.method} ${m.path} ${m.location} ${m.name}`}>
          <td>
            <EndpointName method={m.method} path={m.path} />
          </td>
          <td>
            <PartName location={m.location} name={m.name} />
          </td>
          <td>{m.source === 'openapi' ? 'OpenAPI import' : (m.createdBy ?? <span className="muted">unknown</span>)}</td>
          <td>
            <TimeAgo at={m.createdAt} />
          </td>
          <td>
            <DeprecationToggle
              mark={{
                method: m.method,
                path: m.path,
                location: m.location,
                ...(m.location === 'endpoint' ? {} : { name: m.name }),
              }}
              deprecated
              onChanged={onChanged}
            />
          </td>
        </tr>
      ))}
    </ListTable>
  );
}

/**
 * Usage: what each environment's traffic still uses, per endpoint and part; what nobody calls
 * (orphans) and what is deprecated yet called (zombies); what is safe to remove, with the evidence;
 * and the deprecation marks, set and removed here.
 */
export function UsagePage() {
  const { api, project } = useApp();
  const [shown, setShown] = useState(USAGE_PAGE);
  const picked = useEnvironmentWindow({
    label: 'Usage in',
    environment: 'production',
    windows: WINDOWS,
    window: '30',
    builds: true,
    onChange: () => setShown(USAGE_PAGE),
  });
  const { environment, build } = picked;
  const ofBuild = build === null ? {} : { build };
  const days = Number(picked.windowId);
  const reloadOn = (e: { type: string }) => e.type === 'documentation.committed';
  const usage = useResource(
    () => api.usage(project, { environment, ...ofBuild, limit: shown + 1 }),
    [api, project, environment, build, shown],
    reloadOn,
  );
  const orphans = useResource(
    () => api.orphans(project, { environment, ...ofBuild, days }),
    [api, project, environment, build, days],
    reloadOn,
  );
  const safe = useResource(() => api.safeToRemove(project, { days }), [api, project, days], reloadOn);
  const marks = useResource(() => api.deprecations(project), [api, project]);
  const changed = () => {
    usage.reload();
    orphans.reload();
    safe.reload();
    marks.reload();
  };
  return (
    <div className="page">
      <h1>Usage</h1>
      <p className="muted">
        What the agents saw of each endpoint, from the evidence kept per environment: when it, each status, field, query
        parameter and header was last seen. Nothing here holds a value.
      </p>
      {picked.form}
      <section aria-labelledby="safe-title">
        <h2 id="safe-title">Safe to remove</h2>
        <p className="muted">
          Documented endpoints production did not call in the last {days} days, while other production traffic was seen.
        </p>
        <Async resource={safe} what="what is safe to remove">
          {(data) => <SafeToRemove safe={data} />}
        </Async>
      </section>
      <Async resource={orphans} what="orphans and zombies">
        {(data) => <OrphansAndZombies found={data} onChanged={changed} />}
      </Async>
      <section aria-labelledby="last-seen-title">
        <h2 id="last-seen-title">
          Last seen in {KIND_LABELS[environment]}
          {build === null ? '' : ` build ${build}`}
        </h2>
        <Async resource={usage} what="usage">
          {(data) => (
            <LastSeenTable
              usage={data}
              shown={shown}
              onMore={() => setShown((n) => n + USAGE_PAGE)}
              onChanged={changed}
            />
          )}
        </Async>
      </section>
      <section aria-labelledby="marks-title">
        <h2 id="marks-title">Deprecation marks</h2>
        <Async resource={marks} what="the deprecation marks">
          {(data) => <MarksTable marks={data} onChanged={changed} />}
        </Async>
      </section>
    </div>
  );
}
