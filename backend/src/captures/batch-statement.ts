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
 * only while PostgreSQL executes it (never while Node is busy with other messages). Several
 * batches can go in one statement (`writeBatchStatement`, session 25): `batches` has a row per
 * batch (its number `n` and its own fields, each field one array parameter with an element per
 * batch, so the text is one whatever the count), every row and touched key carries its batch's `n`,
 * and each part below works per batch as it did for the one:
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
 *    room under the cap (`max_endpoints`, in byte order of (method, path)); `overflow` adds the requests of
 *    the rest to `captures.overflow_requests` (issue 15: one capture took 10^5 templates).
 *    The capture's count of endpoints is kept in `capture_endpoint_counts` (`room`; `counted`
 *    adds the summaries the batch inserted, in its session's slot, see the migration
 *    CaptureEndpointCounts): a batch whose endpoints all fit under the cap, even were every one
 *    new, takes every row and reads no summary for them (issue 20: the check read the summary of
 *    every endpoint of the batch and counted the capture's, a tenth of the statement's CPU).
 *    Concurrent batches each see the count before them, so together they may pass the cap by
 *    the new endpoints they bring at once;
 *  - `upserted`: observations, counts incremented atomically (`count = o.count + EXCLUDED.count`),
 *    the bodies' instance extras added (`add_instances`) while the row counts fewer than six,
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
 *  - `dropped`: the (method, path) keys of offered rows not stored because of the cap: those `input`
 *    leaves out, found by its own conditions, not by comparing every offered row with every input
 *    row (which a generic plan did by a nested loop, quadratic in the statement's rows);
 *  - `queued`: the batch's evidence (see `QueuedEvidence`; none when its `row_id` is null) as one
 *    `evidence_queue` row for its environment row, without the exchanges, minutes and consumer
 *    days of dropped keys, which must not become evidence either; its last seen the newest kept
 *    row's. Nothing is queued when nothing is left (no kept row, no minute). In the batch's own
 *    statement, so evidence is exactly as durable as the batch, in one round trip and no
 *    transaction of its own (issue 20).
 * The cap's overflow and the agent's unmatched counts are one update of the capture. The queue's
 * ids are drawn per batch before the insert (`numbered`), so each batch's answer names its own.
 * The statement answers, per batch in order, `claimed`: false for a duplicate (nothing was written), `captured`: false
 * when the capture does not exist (nothing was written), and `queued`: the evidence's id in the
 * queue (null when nothing was queued).
 */
/**
 * A queued list (`list`, a column of `batches`, packed as a table: evidence/queued-payload.ts)
 * without the items of the keys the cap dropped from batch `b`, in order; as sent when nothing was
 * dropped (the common case: the text is stored as it came, no JSON is parsed).
 */
function keptJson(list: string): string {
  return `CASE WHEN NOT EXISTS (SELECT FROM dropped d WHERE d.n = b.n) THEN b.${list}
              ELSE (SELECT coalesce(json_agg(e.x ORDER BY e.i), '[]'::json)::text FROM json_array_elements(b.${list}::json) WITH ORDINALITY AS e(x, i)
                     WHERE e.i = 1 OR NOT EXISTS (SELECT FROM dropped d WHERE d.n = b.n AND d.method = e.x->>0 AND d.path = e.x->>1)) END`;
}

/** Parameters of the batch statement before the batches' own: the touched keys, shapes, names and the rows' columns. */
const SHARED_PARAMETERS = 26;
/** Each batch's own parameters, in this order and type (`batchValues`). */
const BATCH_COLUMNS = [
  ['batch_id', 'uuid'],
  ['project_id', 'uuid'],
  ['capture_id', 'uuid'],
  ['observations', 'integer'],
  ['max_endpoints', 'integer'],
  ['row_id', 'uuid'],
  ['build', 'text'],
  ['commit', 'text'],
  ['exchanges', 'packed'],
  ['minutes', 'packed'],
  ['consumers', 'packed'],
  ['unmatched_requests', 'bigint'],
  ['unmatched_paths', 'integer'],
] as const;

/**
 * Between the batches' packed lists in their one parameter (`packedLists`): the record separator,
 * which JSON text never holds raw (JSON.stringify escapes every control character).
 */
const LIST_SEPARATOR = '\u001e';

/**
 * The packed lists (`QueuedEvidence`'s JSON texts) of every batch as one text, separated by
 * LIST_SEPARATOR, '' for a batch without them: the statement splits it (`string_to_array`, ''
 * read as NULL). As elements of a text array literal every quote of the JSON was escaped, a
 * copy made by JSON.stringify in Node and unescaped by PostgreSQL's array parser (issue 20: 18.6
 * KB escaped for 16.5 KB of lists a batch, and about 80 KB allocated making them).
 */
function packedLists(lists: ReadonlyArray<string | null>): string {
  return lists.map((list) => list ?? '').join(LIST_SEPARATOR);
}

/**
 * The batch statement, one text whatever the count of batches: each batch field is one array
 * parameter with an element per batch (session 26: a text per count was a statement of its own on
 * each connection, planned again on most calls), the packed lists one text each (`packedLists`).
 */
function writeBatches(): string {
  const perBatch = BATCH_COLUMNS.map(([, type], c) =>
    type === 'packed'
      ? `string_to_array($${SHARED_PARAMETERS + c + 1}::text, E'\\x1e', '')`
      : `$${SHARED_PARAMETERS + c + 1}::${type}[]`,
  );
  return `
  WITH batches AS (
    SELECT b.* FROM unnest(${perBatch.join(', ')})
           WITH ORDINALITY AS b(${BATCH_COLUMNS.map(([name]) => name).join(', ')}, n)
  ), capture AS (
    SELECT b.n, c.created_at FROM batches b JOIN captures c ON c.id = b.capture_id AND c.project_id = b.project_id
     ORDER BY c.id FOR KEY SHARE OF c
  ), touched AS (
    SELECT t.n, t.method, t.path, t.i FROM unnest($1::integer[], $2::text[], $3::text[]) WITH ORDINALITY AS t(n, method, path, i)
  ), room AS (
    SELECT b.n, b.max_endpoints IS NULL
           OR (SELECT coalesce(sum(e.endpoints), 0) FROM capture_endpoint_counts e WHERE e.capture_id = b.capture_id)
              + (SELECT count(*) FROM touched t WHERE t.n = b.n) <= b.max_endpoints AS roomy
      FROM batches b
  ), claimed AS (
    INSERT INTO processed_batches (batch_id, project_id, capture_id, observations, xid, touched_methods, touched_paths)
    SELECT b.batch_id, b.project_id, b.capture_id, b.observations, pg_current_xact_id(),
           ARRAY(SELECT t.method FROM touched t WHERE t.n = b.n ORDER BY t.i), ARRAY(SELECT t.path FROM touched t WHERE t.n = b.n ORDER BY t.i)
      FROM batches b
     WHERE EXISTS (SELECT FROM capture c WHERE c.n = b.n)
     ORDER BY b.n
    ON CONFLICT (batch_id, project_id) DO NOTHING
    RETURNING batch_id, project_id, capture_id
  ), written AS (
    SELECT b.n FROM batches b JOIN claimed c ON c.batch_id = b.batch_id AND c.project_id = b.project_id AND c.capture_id = b.capture_id
  ), new_shapes AS (
    INSERT INTO shapes (fingerprint, shape)
    SELECT s.key, s.value FROM jsonb_each($4::jsonb) AS s WHERE EXISTS (SELECT FROM claimed) ORDER BY s.key
    ON CONFLICT (fingerprint) DO NOTHING
  ), offered AS (
    SELECT r.n, r.i, r.method, r.path, r.status, r.req_ct, r.req_fp, r.req_note, r.res_ct, r.res_fp, r.res_note, r.count, r.first_seen, r.last_seen,
           ($5::text[])[r.query_from:r.query_to] AS query,
           ($5::text[])[r.req_h_from:r.req_h_to] AS req_h,
           ($5::text[])[r.res_h_from:r.res_h_to] AS res_h, r.req_inst, r.res_inst
      FROM unnest($6::integer[], $7::text[], $8::text[], $9::smallint[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[],
                  $16::bigint[], $17::timestamptz[], $18::timestamptz[],
                  $19::integer[], $20::integer[], $21::integer[], $22::integer[], $23::integer[], $24::integer[],
                  $25::text[], $26::text[]) WITH ORDINALITY
           AS r(n, method, path, status, req_ct, req_fp, req_note, res_ct, res_fp, res_note, count, first_seen, last_seen,
                query_from, query_to, req_h_from, req_h_to, res_h_from, res_h_to, req_inst, res_inst, i)
     WHERE EXISTS (SELECT FROM written w WHERE w.n = r.n)
  ), known AS (
    SELECT DISTINCT o.n, ce.method, ce.path FROM offered o
      JOIN batches b ON b.n = o.n
      JOIN capture_endpoints ce ON ce.capture_id = b.capture_id AND ce.project_id = b.project_id AND ce.method = o.method AND ce.path = o.path
     WHERE NOT (SELECT roomy FROM room WHERE room.n = o.n)
  ), admitted AS (
    SELECT a.n, a.method, a.path
      FROM (SELECT k.n, k.method, k.path, row_number() OVER (PARTITION BY k.n ORDER BY k.method COLLATE "C", k.path COLLATE "C") AS i
              FROM (SELECT DISTINCT o.n, o.method, o.path FROM offered o WHERE NOT (SELECT roomy FROM room WHERE room.n = o.n)) k
             WHERE NOT EXISTS (SELECT FROM known WHERE known.n = k.n AND known.method = k.method AND known.path = k.path)) a
      JOIN batches b ON b.n = a.n
     WHERE a.i <= greatest(b.max_endpoints - (SELECT count(*) FROM capture_endpoints ce WHERE ce.capture_id = b.capture_id), 0)
  ), input AS (
    SELECT o.* FROM offered o
     WHERE (SELECT roomy FROM room WHERE room.n = o.n)
        OR EXISTS (SELECT FROM known k WHERE k.n = o.n AND k.method = o.method AND k.path = o.path)
        OR EXISTS (SELECT FROM admitted a WHERE a.n = o.n AND a.method = o.method AND a.path = o.path)
  ), overflow AS (
    UPDATE captures SET overflow_requests = captures.overflow_requests + d.over,
                        unmatched_requests = captures.unmatched_requests + coalesce(d.unmatched_requests, 0),
                        unmatched_paths = greatest(captures.unmatched_paths, coalesce(d.unmatched_paths, 0))
      FROM (SELECT b.capture_id, b.unmatched_requests, b.unmatched_paths, EXISTS (SELECT FROM written w WHERE w.n = b.n) AS written,
                   (SELECT coalesce(sum(o.count), 0) FROM offered o WHERE o.n = b.n) - (SELECT coalesce(sum(i.count), 0) FROM input i WHERE i.n = b.n) AS over
              FROM batches b) d
     WHERE captures.id = d.capture_id AND (d.over > 0 OR (d.written AND (d.unmatched_requests > 0 OR d.unmatched_paths > 0)))
  ), dropped AS (
    SELECT DISTINCT o.n, o.method, o.path FROM offered o
     WHERE NOT (SELECT roomy FROM room WHERE room.n = o.n)
       AND NOT EXISTS (SELECT FROM known k WHERE k.n = o.n AND k.method = o.method AND k.path = o.path)
       AND NOT EXISTS (SELECT FROM admitted a WHERE a.n = o.n AND a.method = o.method AND a.path = o.path)
  ), kept AS (
    SELECT b.n, b.project_id, b.row_id, b.build, b.commit,
           ${keptJson('exchanges')} AS exchanges, ${keptJson('minutes')} AS minutes, ${keptJson('consumers')} AS consumers
      FROM batches b
     WHERE b.row_id IS NOT NULL AND EXISTS (SELECT FROM written w WHERE w.n = b.n)
  ), numbered AS (
    SELECT k.*, nextval(pg_get_serial_sequence('evidence_queue', 'id')) AS id FROM kept k
     WHERE EXISTS (SELECT FROM input i WHERE i.n = k.n) OR json_array_length(k.minutes::json) > 1 -- a minute besides the field names; read only when no row is kept
  ), queued AS (
    INSERT INTO evidence_queue (project_id, id, row_id, build, commit, last_seen, packed_exchanges, packed_minutes, packed_consumers)
    OVERRIDING SYSTEM VALUE
    SELECT k.project_id, k.id, k.row_id, k.build, k.commit, coalesce((SELECT max(i.last_seen) FROM input i WHERE i.n = k.n), now()),
           k.exchanges, k.minutes, k.consumers
      FROM numbered k
  ), upserted AS (
    INSERT INTO observations AS o (project_id, capture_id, capture_created_at, method, path, status, request_content_type, request_shape,
                                   request_note, response_content_type, response_shape, response_note, query, request_headers,
                                   response_headers, count, first_seen, last_seen, names_grew, request_instances, response_instances)
    SELECT b.project_id, b.capture_id, c.created_at, r.method, r.path, r.status, r.req_ct, r.req_fp, r.req_note, r.res_ct, r.res_fp, r.res_note,
           r.query, r.req_h, r.res_h, r.count, r.first_seen, r.last_seen, true, r.req_inst, r.res_inst
      FROM input r JOIN batches b ON b.n = r.n JOIN capture c ON c.n = r.n
     ORDER BY r.i
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
    RETURNING o.project_id, o.capture_id, o.method, o.path, o.names_grew
  ), new_keys AS (
    SELECT project_id, capture_id, method, path, bool_or(names_grew) AS grown FROM upserted GROUP BY project_id, capture_id, method, path
  ), summaries AS (
    INSERT INTO capture_endpoints AS ce (project_id, capture_id, method, path, revision)
    SELECT k.project_id, k.capture_id, k.method, k.path, 1 FROM new_keys k
     WHERE k.grown
     ORDER BY k.capture_id, k.method COLLATE "C", k.path COLLATE "C"
    ON CONFLICT (capture_id, method, path, project_id) DO UPDATE SET revision = ce.revision + 1
    RETURNING ce.project_id, ce.capture_id, ce.xmax = 0 AS added
  ), counted AS (
    INSERT INTO capture_endpoint_counts AS e (project_id, capture_id, slot, endpoints)
    SELECT a.project_id, a.capture_id, pg_backend_pid(), a.added
      FROM (SELECT project_id, capture_id, count(*)::integer AS added FROM summaries WHERE added GROUP BY project_id, capture_id) a
     ORDER BY a.capture_id
    ON CONFLICT (capture_id, slot, project_id) DO UPDATE SET endpoints = e.endpoints + EXCLUDED.endpoints
  )
  SELECT EXISTS (SELECT FROM written w WHERE w.n = b.n) AS claimed, EXISTS (SELECT FROM capture c WHERE c.n = b.n) AS captured,
         (SELECT q.id::text FROM numbered q WHERE q.n = b.n) AS queued
    FROM batches b ORDER BY b.n`;
}

/** The batch statement's text (see `writeBatchStatement`). */
export const WRITE_BATCH = writeBatches();

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
  return braced([textArrayElements(values)]);
}

/**
 * The elements of `textArrayLiteral(values)`, without its braces: a slice of one flat string, not
 * a copy (what a batch part keeps until its statement joins them, `braced`).
 */
function textArrayElements(values: ReadonlyArray<string | null>): string {
  // JSON's array text is the array literal when it escapes only quotes and backslashes (`\"`,
  // `\\`, as PostgreSQL does in a quoted element): quoted elements, and `null`, which PostgreSQL
  // reads as NULL. One native call instead of a loop, also for elements that are JSON texts
  // themselves (the folds' histograms and consumer lists, whose every quote is escaped).
  const json = JSON.stringify(values);
  if (!OTHER_JSON_ESCAPE.test(json)) return json.slice(1, -1);
  // Some element holds a control character (or a lone surrogate): JSON's escapes (\n, \u0001)
  // mean something else to PostgreSQL, so only quotes and backslashes are escaped, its way.
  return values
    .map((value) => (value === null ? 'NULL' : `"${value.replace(ARRAY_ELEMENT_ESCAPES, '\\$&')}"`))
    .join(',');
}

/**
 * An array literal of the elements `lists` (each a list's elements without braces, empty for
 * none), as one flat string. Issue 20: a literal made by concatenation (a template, `+`) is a
 * V8 cons string, which node-postgres's Bind message copies flat again (`Buffer.byteLength`),
 * and slicing the braces off one copies it too: each batch's columns were copied four times on
 * their way to the statement, every copy alive while the statement runs. `join` makes one.
 */
function braced(lists: readonly string[]): string {
  const pieces = ['{'];
  for (const elements of lists) {
    if (elements === '') continue;
    if (pieces.length > 1) pieces.push(',');
    pieces.push(elements);
  }
  pieces.push('}');
  return pieces.join('');
}

/** A PostgreSQL array literal of integers. */
export function integerArrayLiteral(values: readonly number[]): string {
  return braced([values.join(',')]);
}

/** A PostgreSQL array literal of integers or nulls. */
function nullableIntegerArrayLiteral(values: ReadonlyArray<number | null>): string {
  return braced([values.map((value) => value ?? 'NULL').join(',')]);
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
 * One batch made ready for the batch statement (`batchPart`): its header's fields, and its rows'
 * columns as array literals' elements, without braces (`writeBatchStatement` joins the batches'
 * into one literal each; the shared names' bounds as numbers: a statement of several batches
 * offsets them). Holds strings and numbers only, not the batch's parsed objects.
 */
export interface BatchPart {
  batchId: string;
  projectId: string;
  captureId: string;
  observations: number;
  maxEndpoints: number | null;
  evidence: QueuedEvidence | null;
  unmatchedRequests: number | null;
  unmatchedPaths: number | null;
  /** The shapes as the members of one JSON object (`"fp":{…},…`), empty for none. */
  shapes: string;
  /** The flat name list's elements (an array literal without its braces) and how many. */
  names: string;
  nameCount: number;
  rows: number;
  /** Method, path, status, the six content types, fingerprints and notes, count, first and last seen (elements, no braces). */
  columns: string[];
  /** Query names, request header names, response header names: each as (from, to) arrays, 1-based in `names`. */
  bounds: number[][];
  /** The bodies' instance extras, request and response (elements, no braces). */
  instances: [string, string];
  touchedMethods: string;
  touchedPaths: string;
  touched: number;
}

/** A batch's part of the batch statement: the header and its folded rows (sorted by their key). */
export function batchPart(header: BatchHeader, rows: readonly AggregatedRow[]): BatchPart {
  const lists = new NameLists();
  const bounds = [
    rows.map((row) => lists.slice(row.query)),
    rows.map((row) => lists.slice(row.req_h)),
    rows.map((row) => lists.slice(row.res_h)),
  ].flatMap((slices) => [slices.map(([from]) => from), slices.map(([, to]) => to)]);
  const touched = touchedEndpoints(rows);
  const shapes = header.shapes.length === 0 ? '' : JSON.stringify(Object.fromEntries(header.shapes)).slice(1, -1);
  return {
    batchId: header.batchId,
    projectId: header.projectId,
    captureId: header.captureId,
    observations: header.observations,
    maxEndpoints: header.maxEndpoints ?? null,
    evidence: header.evidence ?? null,
    unmatchedRequests: header.unmatched?.requests ?? null,
    unmatchedPaths: header.unmatched?.paths ?? null,
    shapes,
    names: textArrayElements(lists.names),
    nameCount: lists.names.length,
    rows: rows.length,
    columns: [
      textArrayElements(rows.map((row) => row.method)),
      textArrayElements(rows.map((row) => row.path)),
      rows.map((row) => row.status).join(','),
      textArrayElements(rows.map((row) => row.req_ct)),
      textArrayElements(rows.map((row) => row.req_fp)),
      textArrayElements(rows.map((row) => row.req_note)),
      textArrayElements(rows.map((row) => row.res_ct)),
      textArrayElements(rows.map((row) => row.res_fp)),
      textArrayElements(rows.map((row) => row.res_note)),
      rows.map((row) => row.count).join(','),
      textArrayElements(rows.map((row) => row.first_seen)),
      textArrayElements(rows.map((row) => row.last_seen)),
    ],
    bounds,
    instances: [
      textArrayElements(rows.map((row) => row.req_inst ?? null)),
      textArrayElements(rows.map((row) => row.res_inst ?? null)),
    ],
    touchedMethods: textArrayElements(touched.methods),
    touchedPaths: textArrayElements(touched.paths),
    touched: touched.methods.length,
  };
}

/** `count` copies of `value`, as an integer array literal. */
function repeated(value: number, count: number): string[] {
  return Array.from({ length: count }, () => String(value));
}

/**
 * The batch statement (its prepared statement's name, text and parameters) writing `parts`, one
 * batch or several (at most one of a capture, and batch ids distinct: see `BatchWriter`), in the
 * order given: their rows are written in that order, so writers of several captures lock them in
 * one order when every statement's parts are sorted by capture id. The statement answers one row
 * per part, in order.
 */
export function writeBatchStatement(parts: readonly BatchPart[]): { name: string; text: string; values: unknown[] } {
  const offsets: number[] = [];
  let names = 0;
  for (const part of parts) {
    offsets.push(names);
    names += part.nameCount;
  }
  const shapes = parts.map((part) => part.shapes).filter((members) => members !== '');
  const shared: unknown[] = [
    braced(parts.map((part, k) => repeated(k + 1, part.touched).join(','))),
    braced(parts.map((part) => part.touchedMethods)),
    braced(parts.map((part) => part.touchedPaths)),
    shapes.length === 0 ? null : braced(shapes),
    braced(parts.map((part) => part.names)),
    braced(parts.map((part, k) => repeated(k + 1, part.rows).join(','))),
    ...Array.from({ length: 12 }, (_, c) => braced(parts.map((part) => part.columns[c] as string))),
    ...Array.from({ length: 6 }, (_, c) =>
      integerArrayLiteral(
        parts.flatMap((part, k) => (part.bounds[c] as number[]).map((at) => at + (offsets[k] as number))),
      ),
    ),
    braced(parts.map((part) => part.instances[0])),
    braced(parts.map((part) => part.instances[1])),
  ];
  const own = [
    textArrayLiteral(parts.map((part) => part.batchId)),
    textArrayLiteral(parts.map((part) => part.projectId)),
    textArrayLiteral(parts.map((part) => part.captureId)),
    nullableIntegerArrayLiteral(parts.map((part) => part.observations)),
    nullableIntegerArrayLiteral(parts.map((part) => part.maxEndpoints)),
    textArrayLiteral(parts.map((part) => part.evidence?.rowId ?? null)),
    textArrayLiteral(parts.map((part) => part.evidence?.build ?? null)),
    textArrayLiteral(parts.map((part) => part.evidence?.commit ?? null)),
    packedLists(parts.map((part) => part.evidence?.exchanges ?? null)),
    packedLists(parts.map((part) => part.evidence?.minutes ?? null)),
    packedLists(parts.map((part) => part.evidence?.consumers ?? null)),
    nullableIntegerArrayLiteral(parts.map((part) => part.unmatchedRequests)),
    nullableIntegerArrayLiteral(parts.map((part) => part.unmatchedPaths)),
  ];
  return { name: 'spectator_write_batch', text: WRITE_BATCH, values: [...shared, ...own] };
}

/** The batch statement of one batch: `writeBatchStatement` of its part. */
export function writeBatchParameters(header: BatchHeader, rows: readonly AggregatedRow[]): unknown[] {
  return writeBatchStatement([batchPart(header, rows)]).values;
}
