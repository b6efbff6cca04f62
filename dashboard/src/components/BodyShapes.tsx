import { isStreamMediaType, type BodyDocResponse, type ResponseDocResponse } from '@spectator/shared';
import { bodyLabel } from '../lib/format';
import { ShapeTable } from './ShapeTable';

/** The request body and the response bodies per status code of an endpoint (documented or observed). */
export function BodyShapes({ request, responses }: { request: BodyDocResponse | null; responses: ResponseDocResponse[] }) {
  const sorted = [...responses].sort((a, b) => a.status - b.status);
  return (
    <div className="bodies">
      <section className="body-card" aria-label="Request body">
        <h3>
          Request body {request && <span className="content-type">{request.contentType}</span>}
        </h3>
        {request && <StreamNote contentType={request.contentType} />}
        {request ? <ShapeTable schema={request.shape} /> : <p className="muted">No request body.</p>}
      </section>
      {sorted.length === 0 && <p className="muted">No responses recorded.</p>}
      {sorted.map((response) => (
        <section className="body-card" key={`${response.status} ${response.contentType}`} aria-label={bodyLabel('response', response.status)}>
          <h3>
            <span className={`status status-${String(response.status).charAt(0)}xx`}>{response.status}</span> response{' '}
            {response.contentType && <span className="content-type">{response.contentType}</span>}
          </h3>
          <StreamNote contentType={response.contentType} />
          {response.shape || response.contentType ? <ShapeTable schema={response.shape} /> : <p className="muted">No body.</p>}
        </section>
      ))}
    </div>
  );
}

/** A stream's shape is the array of its items: say so, or it reads as a JSON array. */
function StreamNote({ contentType }: { contentType: string }) {
  if (!isStreamMediaType(contentType)) return null;
  return <p className="muted stream-note">A stream: shaped as the list of its items (each event’s data, or each line).</p>;
}
