import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bodies of interest per interaction with these request and response content types: a frozen copy
 * of `countOfInterest` (shared/src/interest.ts) as it was on 29 Nov 2026, for `down` (migrations
 * import no live code).
 */
function interestPerInteraction(request: string | null, response: string | null): number {
  const isJson = (contentType: string | null): boolean =>
    contentType !== null &&
    /^application\/(?:[!#$&^_.+\w-]+\+)?json$/.test(contentType.split(';', 1)[0]!.trim().toLowerCase());
  return Number(isJson(request)) + Number(isJson(response));
}

/**
 * A capture summary (`capture_endpoints`) no longer keeps its endpoint's interactions and count of
 * interest (issue 20): the batch statement added them to the summary of every endpoint of every
 * batch, an update and a row lock each (a fifth of the statement's WAL, counted with
 * batch-cpu.bench's BATCH_CPU_COUNT), where the same sums are in the endpoint's observation rows.
 * The capture views add them up from those rows when they read (`CapturesRepository.summaries`),
 * and the batch statement writes a summary only for an endpoint that is new or whose names grew.
 * `down` puts the columns back, summed from the observations.
 */
export class CaptureSummariesReadFromObservations1795960000000 implements MigrationInterface {
  name = 'CaptureSummariesReadFromObservations1795960000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE capture_endpoints DROP COLUMN interactions, DROP COLUMN interest');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE capture_endpoints ADD COLUMN interactions bigint, ADD COLUMN interest bigint');
    const pairs = (await q.query(
      'SELECT DISTINCT request_content_type AS req, response_content_type AS res FROM observations',
    )) as Array<{ req: string | null; res: string | null }>;
    await q.query(
      `UPDATE capture_endpoints ce SET interactions = s.interactions, interest = s.interest
         FROM (SELECT o.capture_id, o.method, o.path, sum(o.count) AS interactions, sum(o.count * coalesce(w.per, 0)) AS interest
                 FROM observations o
                 LEFT JOIN jsonb_to_recordset($1::jsonb) AS w(req text, res text, per integer)
                   ON w.req IS NOT DISTINCT FROM o.request_content_type AND w.res IS NOT DISTINCT FROM o.response_content_type
                GROUP BY o.capture_id, o.method, o.path) s
        WHERE s.capture_id = ce.capture_id AND s.method = ce.method AND s.path = ce.path`,
      [JSON.stringify(pairs.map(({ req, res }) => ({ req, res, per: interestPerInteraction(req, res) })))],
    );
    // A summary without observation rows (none are written so) keeps the smallest value its checks allow.
    await q.query('UPDATE capture_endpoints SET interactions = 1, interest = 0 WHERE interactions IS NULL');
    await q.query(`ALTER TABLE capture_endpoints ALTER COLUMN interactions SET NOT NULL, ALTER COLUMN interest SET NOT NULL,
                     ADD CONSTRAINT capture_endpoints_interactions_positive CHECK (interactions > 0),
                     ADD CONSTRAINT capture_endpoints_interest_range CHECK (interest >= 0)`);
  }
}
