import { isDocumentableHeader, withParameterAt } from '@spectator/shared';
import { useState, type FormEvent } from 'react';
import { Badge } from '../components/badges';
import { ReviewHeader } from '../components/forms';
import { BodyShapes, RejectedRequests } from '../components/BodyShapes';
import { NeedsScope } from '../components/Permission';
import { TemplateForm } from '../components/ReviewSelection';
import { Async } from '../components/states';
import { useApp } from '../hooks/app';
import { useDrafts } from '../hooks/drafts';
import { useResource } from '../hooks/resource';
import { formatMs, formatPercent, plural } from '../lib/format';
import { KIND_ORDER } from '../lib/versions';
import { RuntimePanel } from './RuntimePanel';
import { navigate, routeHref } from '../lib/routes';

/**
 * Reviewing one undocumented endpoint (spec §3): its observed request and response shapes per
 * status code, a description, and Finish — which moves on to choosing the bodies and committing.
 */
export function ReviewEndpointPage({ captureId, method, path }: { captureId: string; method: string; path: string }) {
  const { api, project } = useApp();
  const drafts = useDrafts();
  const existing = drafts.drafts(captureId).find((d) => d.method === method && d.path === path);
  const [description, setDescription] = useState(existing?.description ?? '');
  const observed = useResource(
    () => api.observed(project, captureId, method, path),
    [api, project, captureId, method, path],
    (e) => e.type === 'capture.updated' && e.captureId === captureId,
  );

  const finish = (event: FormEvent) => {
    event.preventDefault();
    drafts.finish(captureId, {
      method,
      path,
      description: description.trim(),
      documentBodies: existing?.documentBodies ?? true,
    });
    navigate({ page: 'commit', project, captureId });
  };

  return (
    <div className="page">
      <ReviewHeader captureId={captureId} endpoint={{ method, path }}>
        <p className="muted">
          <Badge tone="warn">undocumented</Badge> Observed shapes: field names and types only, never values.
        </p>
      </ReviewHeader>
      <Async resource={observed} what="the observed shapes">
        {(endpoint) => (
          <>
            <p className="muted">
              Seen in {plural(endpoint.interactions, 'interaction')}.
              {endpoint.query.length > 0 && (
                <>
                  {' '}
                  Query parameters: <code>{endpoint.query.join(', ')}</code>.
                </>
              )}
              {endpoint.requestHeaders.some(isDocumentableHeader) && (
                <>
                  {' '}
                  Request headers: <code>{endpoint.requestHeaders.filter(isDocumentableHeader).join(', ')}</code>.
                </>
              )}
            </p>
            <EndpointRuntime captureId={captureId} method={method} path={path} />
            <SegmentHints captureId={captureId} method={method} path={path} />
            <BodyShapes request={endpoint.request} responses={endpoint.responses} />
            <RejectedRequests rejected={endpoint.rejectedRequests ?? []} />
          </>
        )}
      </Async>
      <form className="card describe" onSubmit={finish}>
        <label>
          Description
          <textarea
            rows={3}
            value={description}
            onChange={(e) => setDescription(e.target.value)}
            placeholder="What does this endpoint do? e.g. Create a new post."
          />
        </label>
        <div className="row">
          <button type="submit" className="primary">
            Finish
          </button>
          <a href={routeHref({ page: 'captures', project, captureId })}>Cancel</a>
        </div>
      </form>
    </div>
  );
}

/**
 * What the agents measured of this undocumented endpoint: its figures in the capture's pull
 * request or build, and its runtime charts in the capture's kind of environment.
 */
function EndpointRuntime({ captureId, method, path }: { captureId: string; method: string; path: string }) {
  const { api, project } = useApp();
  const runtime = useResource(() => api.captureRuntime(project, captureId), [api, project, captureId]);
  if (runtime.state !== 'ready' || runtime.data.environment === null) return null;
  const { environment } = runtime.data;
  const figures = runtime.data.endpoints.find((e) => e.method === method && e.path === path);
  return (
    <>
      {figures && (
        <p className="muted" data-testid="endpoint-runtime">
          In {environment.name}: {plural(figures.requests, 'request')}, p95{' '}
          {figures.p95 === null ? 'not timed' : formatMs(figures.p95)} (time to last byte),{' '}
          {formatPercent(figures.errorRate)} server errors.
        </p>
      )}
      <RuntimePanel endpoints={[{ method, path }]} kind={KIND_ORDER.find((k) => k === environment.kind)} />
    </>
  );
}

/**
 * "This segment is a parameter": each literal segment of the path can be made a parameter (a name
 * or a slug the agent kept as a word). The template is stated as a path hint, the stored traffic
 * regroups into it at once, and the review moves to the template's endpoint.
 */
function SegmentHints({ captureId, method, path }: { captureId: string; method: string; path: string }) {
  const { project } = useApp();
  const [chosen, setChosen] = useState<number | null>(null);
  const segments = path.split('/').filter(Boolean);
  if (!segments.some((segment) => !segment.startsWith('{'))) return null;
  const proposed = chosen === null ? undefined : withParameterAt(path, chosen);
  return (
    <section className="card segment-hints" aria-label="Path segments">
      <h3>Path segments</h3>
      <p className="muted">
        Is a segment a name, a slug or an identifier? Make it a parameter: this endpoint and its literal siblings become
        one template.
      </p>
      <NeedsScope scope="write" action="Stating a template">
        <div className="path-segments">
          {segments.map((segment, index) =>
            segment.startsWith('{') ? (
              <code key={index}>/{segment}</code>
            ) : (
              <button
                key={index}
                type="button"
                aria-pressed={chosen === index}
                title="This segment is a parameter"
                onClick={() => setChosen(index)}
              >
                /{segment}
              </button>
            ),
          )}
        </div>
      </NeedsScope>
      {proposed !== undefined && (
        <TemplateForm
          key={proposed}
          proposed={proposed}
          what="This segment is a parameter: the template"
          action="Make it a parameter"
          onCancel={() => setChosen(null)}
          onDone={(template) => navigate({ page: 'undocumented', project, captureId, method, path: template })}
        />
      )}
    </section>
  );
}
