import type { EndpointResponse, OpenApiImportResponse } from '@spectator/shared';
import { useMemo, useState, type FormEvent } from 'react';
import { ApiError } from '../api/client';
import { Badge, EndpointName } from '../components/badges';
import { BodyShapes } from '../components/BodyShapes';
import { ChangesTable } from '../components/ChangesTable';
import { FormError } from '../components/forms';
import { DocumentedParameters } from '../components/Parameters';
import { NeedsScope } from '../components/Permission';
import { Async, Empty, ErrorState } from '../components/states';
import { useAction } from '../hooks/action';
import { useApp } from '../hooks/app';
import { useResource } from '../hooks/resource';
import { formatTime, plural } from '../lib/format';
import { saveAsFile } from '../lib/download';
import { routeHref } from '../lib/routes';
import { ChangelogPanel } from './ChangelogPanel';
import { KIND_LABELS, KIND_ORDER, newestFirst, type RowKind } from '../lib/versions';

/** Every documented endpoint (method, path, description, version, parameters, shapes per status) and its history. */
export function DocsPage({ endpointId }: { endpointId?: string }) {
  const { api, project } = useApp();
  const endpoints = useResource(
    () => api.endpoints(project),
    [api, project],
    (e) => e.type === 'documentation.committed',
  );
  const [filter, setFilter] = useState('');
  const [imported, setImported] = useState<OpenApiImportResponse | null>(null);

  return (
    <div className="page">
      <header className="page-header">
        <div>
          <h1>Documentation</h1>
          <p className="muted">
            Committed documentation of the endpoints: shapes with field names and types, never values.
          </p>
        </div>
        <div className="row header-actions">
          <NeedsScope scope="write" action="Importing OpenAPI">
            <OpenApiImport onImported={setImported} />
          </NeedsScope>
          <OpenApiExport />
        </div>
      </header>
      {imported && <ImportResult result={imported} />}
      <ChangelogPanel />
      <Async resource={endpoints} what="the documentation">
        {(list) =>
          list.length === 0 ? (
            <Empty title="Nothing documented yet">
              Review a capture, describe an undocumented endpoint, Finish and Commit changes — or import an OpenAPI
              document you already have. <a href={routeHref({ page: 'captures', project })}>Go to Review</a>
            </Empty>
          ) : (
            <div className="split">
              <aside className="split-side" aria-label="Documented endpoints">
                <input
                  type="search"
                  aria-label="Filter endpoints"
                  placeholder="Filter by path…"
                  value={filter}
                  onChange={(e) => setFilter(e.target.value)}
                />
                <EndpointList list={list} filter={filter} selected={endpointId} />
              </aside>
              <section className="split-main">
                {endpointId ? (
                  <EndpointDoc endpoint={list.find((e) => e.id === endpointId) ?? null} />
                ) : (
                  list.map((endpoint) => <EndpointDoc key={endpoint.id} endpoint={endpoint} compact />)
                )}
              </section>
            </div>
          )
        }
      </Async>
    </div>
  );
}

function EndpointList({ list, filter, selected }: { list: EndpointResponse[]; filter: string; selected?: string }) {
  const { project } = useApp();
  const needle = filter.trim().toLowerCase();
  const shown = useMemo(
    () => list.filter((e) => !needle || `${e.method} ${e.path}`.toLowerCase().includes(needle)),
    [list, needle],
  );
  return (
    <ul className="nav-list">
      <li>
        <a href={routeHref({ page: 'docs', project })} aria-current={!selected ? 'page' : undefined}>
          All endpoints ({list.length})
        </a>
      </li>
      {shown.map((endpoint) => (
        <li key={endpoint.id}>
          <a
            href={routeHref({ page: 'docs', project, endpointId: endpoint.id })}
            aria-current={endpoint.id === selected ? 'page' : undefined}
          >
            <EndpointName method={endpoint.method} path={endpoint.path} />{' '}
            <span className="muted">v{endpoint.version}</span>
          </a>
        </li>
      ))}
    </ul>
  );
}

function EndpointDoc({ endpoint, compact }: { endpoint: EndpointResponse | null; compact?: boolean }) {
  const { project } = useApp();
  if (!endpoint) return <Empty title="No such documented endpoint">Choose one from the list.</Empty>;
  return (
    <article className="card endpoint-doc" aria-label={`${endpoint.method} ${endpoint.path}`}>
      <header className="page-header">
        <h2>
          {compact ? (
            <a href={routeHref({ page: 'docs', project, endpointId: endpoint.id })}>
              <EndpointName method={endpoint.method} path={endpoint.path} />
            </a>
          ) : (
            <EndpointName method={endpoint.method} path={endpoint.path} />
          )}
        </h2>
        <Badge tone="info">version {endpoint.version}</Badge>
        {!compact && <a href={routeHref({ page: 'consumers', project, endpointId: endpoint.id })}>Who calls it</a>}
      </header>
      <p className="description">{endpoint.description || <span className="muted">No description.</span>}</p>
      <DocumentedParameters parameters={endpoint.parameters} />
      <BodyShapes request={endpoint.request} responses={endpoint.responses} />
      {!compact && <VersionHistory endpointId={endpoint.id} />}
    </article>
  );
}

function VersionHistory({ endpointId }: { endpointId: string }) {
  const { api, project } = useApp();
  const history = useResource(
    () => api.endpointVersions(project, endpointId),
    [api, project, endpointId],
    (e) => e.type === 'documentation.committed' || e.type === 'proposal.step',
  );
  return (
    <section aria-labelledby="history-title">
      <h3 id="history-title">Version history</h3>
      <Async resource={history} what="the version history">
        {(versions) =>
          versions.length === 0 ? (
            <Empty title="No history recorded" />
          ) : (
            <ol className="history">
              {newestFirst(versions).map((version, index, ordered) => (
                <li key={version.version}>
                  <Badge tone="info">{version.version}</Badge> {formatTime(version.createdAt)}
                  {version.proposal?.approvedBy && <> · approved by {version.proposal.approvedBy}</>}
                  {version.proposal && (
                    <>
                      {' '}
                      ·{' '}
                      <a href={routeHref({ page: 'proposals', project, proposalId: version.proposal.id })}>
                        {version.proposal.title || 'proposal'}
                      </a>
                    </>
                  )}
                  {version.changes && version.changes.length > 0 && (
                    <details>
                      <summary>{plural(version.changes.length, 'change')}</summary>
                      <ChangesTable
                        changes={version.changes}
                        sides={[`Version ${ordered[index + 1]?.version ?? 'before'}`, `Version ${version.version}`]}
                      />
                    </details>
                  )}
                </li>
              ))}
            </ol>
          )
        }
      </Async>
    </section>
  );
}

/**
 * Imports an OpenAPI 3.0/3.1 file (JSON or YAML) as a proposal, approved at once when asked; shows
 * the proposal it made and what the import simplified.
 */
function OpenApiImport({ onImported }: { onImported: (result: OpenApiImportResponse | null) => void }) {
  const { api, project } = useApp();
  const [file, setFile] = useState<File | null>(null);
  const [approve, setApprove] = useState(false);
  const { busy, error, run } = useAction();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!file) return;
    const answer = await run(async () => api.importOpenApi(project, await file.text(), { approve }));
    if (answer) {
      onImported(answer);
      setFile(null);
    }
  };

  return (
    <div className="openapi-import">
      <form onSubmit={submit} className="row" aria-label="Import OpenAPI">
        <label className="button">
          {file ? file.name : 'Import OpenAPI…'}
          <input
            type="file"
            accept=".json,.yaml,.yml,application/json,application/yaml"
            className="visually-hidden"
            aria-label="OpenAPI file"
            onChange={(e) => (setFile(e.target.files?.[0] ?? null), onImported(null))}
          />
        </label>
        {file && (
          <>
            <label className="checkbox">
              <input type="checkbox" checked={approve} onChange={(e) => setApprove(e.target.checked)} />
              Approve at once
            </label>
            <button type="submit" className="primary" disabled={busy}>
              {busy ? 'Importing…' : 'Import'}
            </button>
          </>
        )}
      </form>
      <FormError error={error} />
    </div>
  );
}

/** The proposal an import made, and what it simplified. */
function ImportResult({ result }: { result: OpenApiImportResponse }) {
  const { project } = useApp();
  return (
    <div className="state import-result" role="status">
      <strong>
        <a href={routeHref({ page: 'proposals', project, proposalId: result.proposal.id })}>{result.proposal.title}</a>:{' '}
        {plural(result.proposal.endpoints.length, 'endpoint')},{' '}
        {result.proposal.status === 'Open' ? 'waiting for approval' : result.proposal.status.toLowerCase()}.
      </strong>
      {result.warnings.length > 0 && (
        <details>
          <summary>{plural(result.warnings.length, 'simplification')}</summary>
          <ul className="small">
            {result.warnings.map((warning) => (
              <li key={warning}>{warning}</li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}

/**
 * The OpenAPI 3.1 export. The API wants a bearer token, which a plain link cannot send, so the
 * document is fetched with the session's token and handed to the browser as a file.
 */
function OpenApiExport() {
  const { api, project } = useApp();
  const [state, setState] = useState<'idle' | 'busy' | Error>('idle');
  // The documentation as it is now, or the versions that run in an environment now (from evidence).
  const [environment, setEnvironment] = useState<'' | RowKind>('');
  const params = environment === '' ? {} : { environment };
  const download = async () => {
    setState('busy');
    try {
      const document = await api.openapi(project, params);
      saveAsFile(
        JSON.stringify(document, null, 2),
        'application/json',
        `${project}${environment ? `-${environment}` : ''}-openapi.json`,
      );
      setState('idle');
    } catch (caught) {
      setState(caught instanceof Error ? caught : new ApiError(0, String(caught), 'openapi.json'));
    }
  };
  return (
    <div className="openapi">
      <div className="row">
        <select
          aria-label="Export which versions"
          value={environment}
          onChange={(e) => setEnvironment(e.target.value as '' | RowKind)}
        >
          <option value="">Current documentation</option>
          {KIND_ORDER.map((kind) => (
            <option key={kind} value={kind}>
              As running in {KIND_LABELS[kind]}
            </option>
          ))}
        </select>
        <button type="button" onClick={download} disabled={state === 'busy'}>
          {state === 'busy' ? 'Exporting…' : 'OpenAPI 3.1 export'}
        </button>
      </div>
      <code className="muted small" title="The same document for scripts (send your token as a bearer token)">
        GET {api.openapiPath(project, params)}
      </code>
      {state instanceof Error && <ErrorState error={state} what="the OpenAPI export" retry={download} />}
    </div>
  );
}
