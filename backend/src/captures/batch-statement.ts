import { REQUIRED_INSTANCES, type Shape } from '@spectator/shared';

/** One observation row of a batch after folding (see `aggregateObservations`); also what the evidence hook reads. */
export interface AggregatedRow {
  method: string;
  path: string;
  status: number;
  req_ct: string | null;
  req_fp: string | null;
  req_note: string | null;
  res_ct: string | null;
  res_fp: string | null;
  res_note: string | null;
  query: string[];
  req_h: string[];
  res_h: string[];
  count: number;
  first_seen: string;
  last_seen: string;
  /** The bodies' instance extras (`WireBody.instances`); null or absent for none, and once the row counts four exchanges. */
  req_inst?: string | null;
  res_inst?: string | null;
}

/**
 * Kept among an observation row's response header names when the API answered some of its
 * exchanges with a `Sunset` date already past (`WireObservation.sunsetPast`): a mark, not a
 * header. `:` is not a token character (RFC 9110 §5.1), so no real header name can be it.
 */
export const SUNSET_PAST_MARK = 'sunset:past';

/** The response header names a row keeps (sorted): the names sent, and `SUNSET_PAST_MARK` when it applies. */
export function responseHeaderNames(o: { responseHeaders: string[]; sunsetPast?: number }): string[] {
  return o.sunsetPast === undefined || o.sunsetPast === 0
    ? o.responseHeaders
    : [...o.responseHeaders, SUNSET_PAST_MARK].sort();
}

/** What identifies a batch and what it carries besides its rows. */
export interface BatchHeader {
  batchId: string;
  projectId: string;
  captureId: string;
  /** Observations as sent (before folding), recorded with the batch id. */
  observations: number;
  /** New shapes, sorted by fingerprint (one lock order for concurrent batches). */
  shapes: ReadonlyArray<readonly [string, Shape]>;
  /** Endpoints (method, path) a capture keeps at most; rows of further ones are counted as overflow. Absent: no cap. */
  maxEndpoints?: number;
  /** The batch's evidence, queued by the statement (absent: the batch is no evidence, e.g. `local`). */
  evidence?: QueuedEvidence;
  /** Noise the agent counted (requests and paths no template matched), added to the capture. Absent: none. */
  unmatched?: { requests: number; paths: number };
}

/**
 * A batch's evidence as the batch statement queues it in `evidence_queue` for its environment row:
 * the build and commit, and its exchanges, runtime minutes and consumer days, each packed as a
 * table (`packList`, evidence/queued-payload.ts) whose items start with `method` and `path` (of
 * every row of the batch: the statement leaves out those of endpoints the capture's cap dropped).
 */
export interface QueuedEvidence {
  rowId: string;
  build: string | null;
  commit: string | null;
  exchanges: string;
  minutes: string;
  consumers: string;
}

/**
 * Writes a whole batch in one statement, so a batch costs one round trip and holds its row locks
 * only while PostgreSQL executes it (never while Node is busy with other messages):
 *  - `capture`: the capture row, locked `FOR KEY SHARE` once for the batch (what the rows' foreign
 *    keys to it did row by row, issue 20): deleting it waits for the batch's commit, and a batch
 *    after a delete finds no row and writes nothing (`captured` false; the caller fails it);
 *  - `claimed`: the batch id goes in first; a batch id committed before (or being committed by a
 *    concurrent resend, which this waits for) yields no row, and every later part reads nothing.
 *    Its row records the writing transaction and the (method, path) keys the batch touches, which
 *    the capture views patch themselves from (see `CapturesService`);
 *  - `new_shapes`: the batch's shapes, content-addressed (observations name only these and stored
 *    ones, which are never deleted: `IngestService.ensureShapesKnown`, trigger `shapes_kept`);
 *  - `offered`: the folded rows as parallel typed arrays (`unnest`, far cheaper to parse than one
 *    JSON document); each row's query and header names are a slice of one flat `names` array;
 *  - `input`: the offered rows of endpoints the capture has, and of new endpoints while it has
 *    room under the cap ($27, in byte order of (method, path)); `overflow` adds the requests of
 *    the rest to `captures.overflow_requests` (issue 15: one capture took 10^5 templates).
 *    The capture's count of endpoints is kept in `capture_endpoint_counts` (`room`; `counted`
 *    adds the summaries the batch inserted, in its session's slot, see the migration
 *    CaptureEndpointCounts): a batch whose endpoints all fit under the cap, even were every one
 *    new, takes every row and reads no summary for them (issue 20: the check read the summary of
 *    every endpoint of the batch and counted the capture's, a tenth of the statement's CPU).
 *    Concurrent batches each see the count before them, so together they may pass the cap by
 *    the new endpoints they bring at once;
 *  - `upserted`: observations, counts incremented atomically (`count = o.count + EXCLUDED.count`),
 *    the bodies' instance extras ($36, $37) added (`add_instances`) while the row counts fewer than six,
 *    in the partition of their capture's creation week (`capture_created_at`, read from the capture);
 *  - `summaries`: the per-(capture, method, path) summaries the capture views list and keep their
 *    diff flags in, written only for the endpoints that got a new observation key or new request
 *    names on a stored one (`names_grew`: true on an insert, and set by an update from the row as
 *    it was, since RETURNING sees only the new row; a partitioned table cannot return `xmax`): a
 *    new endpoint's is inserted, a stored one's `revision` grows by one, which makes its cached
 *    diff flag stale. Every other endpoint of the batch already has its summary (written with its
 *    first observation row) and is not touched: its interactions and count of interest are read
 *    from its observation rows (`CapturesRepository.summaries`; issue 20: adding them here was an
 *    update and a row lock per endpoint of every batch, a fifth of the statement's WAL). Written in
 *    byte order of (method, path), so concurrent batches lock them in the same order;
 *  - `dropped`: the (method, path) keys of offered rows not stored because of the cap;
 *  - `queued`: the batch's evidence ($28–$33, see `QueuedEvidence`; none when $28 is null) as one
 *    `evidence_queue` row for its environment row, without the exchanges, minutes and consumer
 *    days of dropped keys, which must not become evidence either; its last seen the newest kept
 *    row's. Nothing is queued when nothing is left (no kept row, no minute). In the batch's own
 *    statement, so evidence is exactly as durable as the batch, in one round trip and no
 *    transaction of its own (issue 20).
 * The cap's overflow and the agent's unmatched counts ($34, $35) are one update of the capture.
 * The statement answers `claimed`: false for a duplicate (nothing was written), `captured`: false
 * when the capture does not exist (nothing was written), and `queued`: the evidence's id in the
 * queue (null when nothing was queued).
 */
/**
 * A queued list (parameter `parameter`, packed as a table: evidence/queued-payload.ts) without the
 * items of the keys the cap dropped, in order; as sent when nothing was dropped (the common case:
 * the text is stored as it came, no JSON is parsed).
 */
function keptJson(parameter: string): string {
  return `CASE WHEN NOT EXISTS (SELECT FROM dropped) THEN ${parameter}::text
              ELSE (SELECT coalesce(json_agg(e.x ORDER BY e.n), '[]'::json)::text FROM json_array_elements(${parameter}::json) WITH ORDINALITY AS e(x, n)
                     WHERE e.n = 1 OR NOT EXISTS (SELECT FROM dropped d WHERE d.method = e.x->>0 AND d.path = e.x->>1)) END`;
}

export const WRITE_BATCH = `
  WITH capture AS (
    SELECT c.created_at FROM captures c WHERE c.id = $3::uuid AND c.project_id = $2::uuid FOR KEY SHARE
  ), room AS (
    SELECT $27::integer IS NULL
           OR (SELECT coalesce(sum(n.endpoints), 0) FROM capture_endpoint_counts n WHERE n.capture_id = $3::uuid)
              + cardinality($25::text[]) <= $27::integer AS roomy
  ), claimed AS (
    INSERT INTO processed_batches (batch_id, project_id, capture_id, observations, xid, touched_methods, touched_paths)
    SELECT $1::uuid, $2::uuid, $3::uuid, $4::integer, pg_current_xact_id(), $25::text[], $26::text[] FROM capture
    ON CONFLICT (batch_id, project_id) DO NOTHING
    RETURNING batch_id
  ), new_shapes AS (
    INSERT INTO shapes (fingerprint, shape)
    SELECT s.key, s.value FROM jsonb_each($5::jsonb) AS s WHERE EXISTS (SELECT FROM claimed) ORDER BY s.key
    ON CONFLICT (fingerprint) DO NOTHING
  ), offered AS (
    SELECT r.method, r.path, r.status, r.req_ct, r.req_fp, r.req_note, r.res_ct, r.res_fp, r.res_note, r.count, r.first_seen, r.last_seen,
           ($6::text[])[r.query_from:r.query_to] AS query,
           ($6::text[])[r.req_h_from:r.req_h_to] AS req_h,
           ($6::text[])[r.res_h_from:r.res_h_to] AS res_h, r.req_inst, r.res_inst
      FROM unnest($7::text[], $8::text[], $9::smallint[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[],
                  $16::bigint[], $17::timestamptz[], $18::timestamptz[],
                  $19::integer[], $20::integer[], $21::integer[], $22::integer[], $23::integer[], $24::integer[],
                  $36::text[], $37::text[])
           AS r(method, path, status, req_ct, req_fp, req_note, res_ct, res_fp, res_note, count, first_seen, last_seen,
                query_from, query_to, req_h_from, req_h_to, res_h_from, res_h_to, req_inst, res_inst)
     WHERE EXISTS (SELECT FROM claimed)
  ), known AS (
    SELECT ce.method, ce.path FROM capture_endpoints ce
     WHERE ce.capture_id = $3::uuid AND (ce.method, ce.path) IN (SELECT method, path FROM offered)
       AND NOT (SELECT roomy FROM room)
  ), admitted AS (
    SELECT DISTINCT ON (k.method COLLATE "C", k.path COLLATE "C") k.method, k.path FROM offered k
     WHERE NOT EXISTS (SELECT FROM known WHERE known.method = k.method AND known.path = k.path)
     ORDER BY k.method COLLATE "C", k.path COLLATE "C"
     LIMIT CASE WHEN $27::integer IS NULL THEN NULL
                ELSE greatest($27::integer - (SELECT count(*) FROM capture_endpoints WHERE capture_id = $3::uuid), 0) END
  ), input AS (
    SELECT o.* FROM offered o
     WHERE (SELECT roomy FROM room)
        OR EXISTS (SELECT FROM known k WHERE k.method = o.method AND k.path = o.path)
        OR EXISTS (SELECT FROM admitted a WHERE a.method = o.method AND a.path = o.path)
  ), overflow AS (
    UPDATE captures SET overflow_requests = overflow_requests + d.n,
                        unmatched_requests = unmatched_requests + coalesce($34::bigint, 0),
                        unmatched_paths = greatest(unmatched_paths, coalesce($35::integer, 0))
      FROM (SELECT (SELECT coalesce(sum(count), 0) FROM offered) - (SELECT coalesce(sum(count), 0) FROM input) AS n) d
     WHERE captures.id = $3::uuid AND (d.n > 0 OR (EXISTS (SELECT FROM claimed) AND ($34::bigint > 0 OR $35::integer > 0)))
  ), dropped AS (
    SELECT DISTINCT o.method, o.path FROM offered o
     WHERE NOT EXISTS (SELECT FROM input i WHERE i.method = o.method AND i.path = o.path)
  ), kept AS (
    SELECT ${keptJson('$31')} AS exchanges, ${keptJson('$32')} AS minutes, ${keptJson('$33')} AS consumers
     WHERE $28::uuid IS NOT NULL AND EXISTS (SELECT FROM claimed)
  ), queued AS (
    INSERT INTO evidence_queue (project_id, row_id, build, commit, last_seen, packed_exchanges, packed_minutes, packed_consumers)
    SELECT $2::uuid, $28::uuid, $29::text, $30::text, coalesce((SELECT max(last_seen) FROM input), now()), k.exchanges, k.minutes, k.consumers
      FROM kept k
     WHERE EXISTS (SELECT FROM input) OR json_array_length(k.minutes::json) > 1 -- a minute besides the field names; read only when no row is kept
    RETURNING id
  ), upserted AS (
    INSERT INTO observations AS o (project_id, capture_id, capture_created_at, method, path, status, request_content_type, request_shape,
                                   request_note, response_content_type, response_shape, response_note, query, request_headers,
                                   response_headers, count, first_seen, last_seen, names_grew, request_instances, response_instances)
    SELECT $2::uuid, $3::uuid, c.created_at, r.method, r.path, r.status, r.req_ct, r.req_fp, r.req_note, r.res_ct, r.res_fp, r.res_note,
           r.query, r.req_h, r.res_h, r.count, r.first_seen, r.last_seen, true, r.req_inst, r.res_inst
      FROM input r CROSS JOIN capture c
    ON CONFLICT (capture_id, method, path, status, (coalesce(request_content_type, ' ')), (coalesce(request_shape, ' ')),
                 (coalesce(response_content_type, ' ')), (coalesce(response_shape, ' ')), project_id, capture_created_at)
    DO UPDATE SET
      count = o.count + EXCLUDED.count,
      first_seen = least(o.first_seen, EXCLUDED.first_seen),
      last_seen = greatest(o.last_seen, EXCLUDED.last_seen),
      request_note = coalesce(EXCLUDED.request_note, o.request_note),
      response_note = coalesce(EXCLUDED.response_note, o.response_note),
      query = CASE WHEN EXCLUDED.query <@ o.query THEN o.query ELSE ARRAY(SELECT DISTINCT x FROM unnest(o.query || EXCLUDED.query) x ORDER BY x) END,
      request_headers = CASE WHEN EXCLUDED.request_headers <@ o.request_headers THEN o.request_headers
                        ELSE ARRAY(SELECT DISTINCT x FROM unnest(o.request_headers || EXCLUDED.request_headers) x ORDER BY x) END,
      response_headers = CASE WHEN EXCLUDED.response_headers <@ o.response_headers THEN o.response_headers
                         ELSE ARRAY(SELECT DISTINCT x FROM unnest(o.response_headers || EXCLUDED.response_headers) x ORDER BY x) END,
      names_grew = NOT (EXCLUDED.query <@ o.query AND EXCLUDED.request_headers <@ o.request_headers),
      request_instances = CASE WHEN o.count + EXCLUDED.count >= ${REQUIRED_INSTANCES} THEN NULL
                               ELSE add_instances(o.request_instances, EXCLUDED.request_instances) END,
      response_instances = CASE WHEN o.count + EXCLUDED.count >= ${REQUIRED_INSTANCES} THEN NULL
                                ELSE add_instances(o.response_instances, EXCLUDED.response_instances) END
    RETURNING o.method, o.path, o.names_grew
  ), new_keys AS (
    SELECT method, path, bool_or(names_grew) AS grown FROM upserted GROUP BY method, path
  ), summaries AS (
    INSERT INTO capture_endpoints AS ce (project_id, capture_id, method, path, revision)
    SELECT $2::uuid, $3::uuid, k.method, k.path, 1 FROM new_keys k
     WHERE k.grown
     ORDER BY k.method COLLATE "C", k.path COLLATE "C"
    ON CONFLICT (capture_id, method, path, project_id) DO UPDATE SET revision = ce.revision + 1
    RETURNING ce.xmax = 0 AS added
  ), counted AS (
    INSERT INTO capture_endpoint_counts AS n (project_id, capture_id, slot, endpoints)
    SELECT $2::uuid, $3::uuid, pg_backend_pid(), a.added FROM (SELECT count(*)::integer AS added FROM summaries WHERE added) a
     WHERE a.added > 0
    ON CONFLICT (capture_id, slot, project_id) DO UPDATE SET endpoints = n.endpoints + EXCLUDED.endpoints
  )
  SELECT EXISTS (SELECT FROM claimed) AS claimed, EXISTS (SELECT FROM capture) AS captured, (SELECT id::text FROM queued) AS queued`;

/** 1-based bounds of each distinct name list in one flat array (identical lists share a slice). */
class NameLists {
  readonly names: string[] = [];
  private readonly slices = new Map<string, readonly [number, number]>();

  slice(list: readonly string[]): readonly [number, number] {
    if (list.length === 0) return EMPTY_SLICE;
    // Validated names hold no NUL (PostgreSQL text cannot), so NUL-joined keys never collide.
    const key = list.join('\u0000');
    let bounds = this.slices.get(key);
    if (bounds === undefined) {
      bounds = [this.names.length + 1, this.names.length + list.length];
      this.names.push(...list);
      this.slices.set(key, bounds);
    }
    return bounds;
  }
}

/** In PostgreSQL `a[1:0]` is the empty array. */
const EMPTY_SLICE = [1, 0] as const;

const ARRAY_ELEMENT_ESCAPES = /[\\"]/g;
/**
 * In JSON text, an escape other than `\"` and `\\` (a control character's, a lone surrogate's),
 * or an escaped backslash before a letter (a needless fallback, never a wrong fast path).
 */
const OTHER_JSON_ESCAPE = /\\[^"\\]/;

/**
 * A PostgreSQL array literal of text values (`NULL` for null), every element quoted. Built here
 * because pg's generic array encoding (a regular expression per element) cost more CPU than the
 * rest of the batch's parameters together.
 */
export function textArrayLiteral(values: ReadonlyArray<string | null>): string {
  // JSON's array text is the array literal when it escapes only quotes and backslashes (`\"`,
  // `\\`, as PostgreSQL does in a quoted element): quoted elements, and `null`, which PostgreSQL
  // reads as NULL. One native call instead of a loop, also for elements that are JSON texts
  // themselves (the folds' histograms and consumer lists, whose every quote is escaped).
  const json = JSON.stringify(values);
  if (!OTHER_JSON_ESCAPE.test(json)) return `{${json.slice(1, -1)}}`;
  // Some element holds a control character (or a lone surrogate): JSON's escapes (\n, \u0001)
  // mean something else to PostgreSQL, so only quotes and backslashes are escaped, its way.
  let literal = '{';
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as string | null;
    if (i > 0) literal += ',';
    literal += value === null ? 'NULL' : `"${value.replace(ARRAY_ELEMENT_ESCAPES, '\\$&')}"`;
  }
  return `${literal}}`;
}

/** A PostgreSQL array literal of integers. */
export function integerArrayLiteral(values: readonly number[]): string {
  return `{${values.join(',')}}`;
}

/**
 * The distinct (method, path) keys of folded rows, as two parallel arrays. Rows come sorted by
 * their aggregate key, which starts with method and path, so equal keys are adjacent.
 */
export function touchedEndpoints(rows: readonly AggregatedRow[]): { methods: string[]; paths: string[] } {
  const methods: string[] = [];
  const paths: string[] = [];
  for (const row of rows) {
    if (methods.at(-1) === row.method && paths.at(-1) === row.path) continue;
    methods.push(row.method);
    paths.push(row.path);
  }
  return { methods, paths };
}

/**
 * The parameters of WRITE_BATCH: the batch header, the flat name array, one array literal per
 * column of the folded rows, the touched endpoints, the cap, then the evidence and noise counts.
 */
export function writeBatchParameters(header: BatchHeader, rows: readonly AggregatedRow[]): unknown[] {
  const lists = new NameLists();
  // Query names, request header names, response header names: each as (from, to) arrays.
  const bounds = [
    rows.map((row) => lists.slice(row.query)),
    rows.map((row) => lists.slice(row.req_h)),
    rows.map((row) => lists.slice(row.res_h)),
  ].flatMap((slices) => [
    integerArrayLiteral(slices.map(([from]) => from)),
    integerArrayLiteral(slices.map(([, to]) => to)),
  ]);
  const touched = touchedEndpoints(rows);
  const evidence = header.evidence;
  return [
    header.batchId,
    header.projectId,
    header.captureId,
    header.observations,
    header.shapes.length === 0 ? null : JSON.stringify(Object.fromEntries(header.shapes)),
    textArrayLiteral(lists.names),
    textArrayLiteral(rows.map((row) => row.method)),
    textArrayLiteral(rows.map((row) => row.path)),
    integerArrayLiteral(rows.map((row) => row.status)),
    textArrayLiteral(rows.map((row) => row.req_ct)),
    textArrayLiteral(rows.map((row) => row.req_fp)),
    textArrayLiteral(rows.map((row) => row.req_note)),
    textArrayLiteral(rows.map((row) => row.res_ct)),
    textArrayLiteral(rows.map((row) => row.res_fp)),
    textArrayLiteral(rows.map((row) => row.res_note)),
    integerArrayLiteral(rows.map((row) => row.count)),
    textArrayLiteral(rows.map((row) => row.first_seen)),
    textArrayLiteral(rows.map((row) => row.last_seen)),
    ...bounds,
    textArrayLiteral(touched.methods),
    textArrayLiteral(touched.paths),
    header.maxEndpoints ?? null,
    evidence?.rowId ?? null,
    evidence?.build ?? null,
    evidence?.commit ?? null,
    evidence?.exchanges ?? null,
    evidence?.minutes ?? null,
    evidence?.consumers ?? null,
    header.unmatched?.requests ?? null,
    header.unmatched?.paths ?? null,
    textArrayLiteral(rows.map((row) => row.req_inst ?? null)),
    textArrayLiteral(rows.map((row) => row.res_inst ?? null)),
  ];
}
