import {
  isStreamMediaType,
  type BodyDocResponse,
  type RejectedRequestResponse,
  type ResponseDocResponse,
} from '@spectator/shared';
import { bodyLabel, plural } from '../lib/format';
import { ShapeTable } from './ShapeTable';

/** The request body and the response bodies per status code of an endpoint (documented or observed). */
export function BodyShapes({
  request,
  responses,
}: {
  request: BodyDocResponse | null;
  responses: ResponseDocResponse[];
}) {
  const sorted = [...responses].sort((a, b) => a.status - b.status);
  return (
    <div className="bodies">
      <section className="body-card" aria-label="Request body">
        <h3>Request body {request && <span className="content-type">{request.contentType}</span>}</h3>
        {request && <StreamNote contentType={request.contentType} />}
        {request ? <ShapeTable schema={request.shape} /> : <p className="muted">No request body.</p>}
      </section>
      {sorted.length === 0 && <p className="muted">No responses recorded.</p>}
      {sorted.map((response) => (
        <section
          className="body-card"
          key={`${response.status} ${response.contentType}`}
          aria-label={bodyLabel('response', response.status)}
        >
          <h3>
            <span className={`status status-${String(response.status).charAt(0)}xx`}>{response.status}</span> response{' '}
            {response.contentType && <span className="content-type">{response.contentType}</span>}
          </h3>
          <StreamNote contentType={response.contentType} />
          {response.shape || response.contentType ? (
            <ShapeTable schema={response.shape} />
          ) : (
            <p className="muted">No body.</p>
          )}
        </section>
      ))}
    </div>
  );
}

/** A stream's shape is the array of its items: say so, or it reads as a JSON array. */
function StreamNote({ contentType }: { contentType: string }) {
  if (!isStreamMediaType(contentType)) return null;
  return (
    <p className="muted stream-note">A stream: shaped as the list of its items (each event’s data, or each line).</p>
  );
}

/**
 * Request bodies the API rejected (4xx), per status: shown so a reviewer sees what clients got
 * wrong, but never part of the documented request (only accepted exchanges document it).
 */
export function RejectedRequests({ rejected }: { rejected: readonly RejectedRequestResponse[] }) {
  if (rejected.length === 0) return null;
  return (
    <section className="card rejected-requests" aria-label="Rejected requests">
      <h3>Rejected requests</h3>
      <p className="muted">
        Request bodies the API answered with a client error. They are not documented and never offered as a change to
        accept.
      </p>
      {rejected.map((r) => (
        <section className="body-card" key={`${r.status} ${r.contentType}`} aria-label={`Rejected request ${r.status}`}>
          <h4>
            <span className="status status-4xx">{r.status}</span> {plural(r.interactions, 'request')}{' '}
            <span className="content-type">{r.contentType}</span>
          </h4>
          <ShapeTable schema={r.shape} />
        </section>
      ))}
    </section>
  );
}
