import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bodies of interest per interaction with these request and response content types: 1 for each
 * side whose media type is JSON (`application/json`, `application/*+json`, parameters and letter
 * case aside). A frozen copy of `countOfInterest` in `@spectator/shared` (shared/src/interest.ts)
 * as it was on 28 Nov 2026: a migration does what it did when it was written, whatever the shared
 * rule becomes (migrations import no live code, `.dependency-cruiser.cjs`).
 */
function interestPerInteraction(request: string | null, response: string | null): number {
  const isJson = (contentType: string | null): boolean =>
    contentType !== null &&
    /^application\/(?:[!#$&^_.+\w-]+\+)?json$/.test(contentType.split(';', 1)[0]!.trim().toLowerCase());
  return Number(isJson(request)) + Number(isJson(response));
}

/**
 * Per-(capture, method, path) summaries kept by the ingest transaction, so the capture views read
 * one row per endpoint instead of aggregating observations on every request:
 *  - `interactions` and `interest` (count of interest) are running sums of the batches;
 *  - `revision` grows whenever a new observation key (status, content types, shapes) of the
 *    endpoint appears; `checked_version`, `checked_revision` and `differs` cache whether the
 *    endpoint's traffic differs from a documented version, as computed by the diffs view for that
 *    version at that revision (stale when either moved on, then recomputed on the next read).
 * Every batch updates the rows of its endpoints; free space on each page keeps those updates
 * on the page (HOT), without a new index entry each time.
 */
export class CaptureEndpoints1763900000000 implements MigrationInterface {
  name = 'CaptureEndpoints1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE capture_endpoints (
        capture_id uuid NOT NULL REFERENCES captures(id) ON DELETE CASCADE,
        method text NOT NULL,
        path text NOT NULL,
        interactions bigint NOT NULL CONSTRAINT capture_endpoints_interactions_positive CHECK (interactions > 0),
        interest bigint NOT NULL CONSTRAINT capture_endpoints_interest_range CHECK (interest >= 0),
        revision bigint NOT NULL DEFAULT 0,
        checked_version uuid,
        checked_revision bigint,
        differs boolean,
        PRIMARY KEY (capture_id, method, path)
      ) WITH (fillfactor = 80)`);
    // Count of interest per interaction depends only on the two content types: compute it for
    // each distinct pair, then sum in SQL.
    const pairs = (await q.query(
      'SELECT DISTINCT request_content_type AS req, response_content_type AS res FROM observations',
    )) as Array<{ req: string | null; res: string | null }>;
    const perInteraction = pairs.map(({ req, res }) => ({
      req,
      res,
      per: interestPerInteraction(req, res),
    }));
    await q.query(
      `INSERT INTO capture_endpoints (capture_id, method, path, interactions, interest)
       SELECT o.capture_id, o.method, o.path, sum(o.count), sum(o.count * coalesce(w.per, 0))
         FROM observations o
         LEFT JOIN jsonb_to_recordset($1::jsonb) AS w(req text, res text, per integer)
           ON w.req IS NOT DISTINCT FROM o.request_content_type AND w.res IS NOT DISTINCT FROM o.response_content_type
        GROUP BY o.capture_id, o.method, o.path`,
      [JSON.stringify(perInteraction)],
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE capture_endpoints');
  }
}
