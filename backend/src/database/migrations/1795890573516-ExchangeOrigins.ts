import type { MigrationInterface, QueryRunner } from 'typeorm';

const EXCHANGE_KEY = `method, path, status, (coalesce(request_content_type, ' ')), (coalesce(request_shape, ' ')),
  (coalesce(response_content_type, ' ')), (coalesce(response_shape, ' '))`;

/**
 * Makes `exchange_origins` and fills it from the evidence of every row (here, and in the `down` of
 * `OriginsReadFromEvidence1795902502424`, which reads the origins from the evidence instead).
 */
export async function makeExchangeOrigins(q: QueryRunner): Promise<void> {
  await q.query(`
      CREATE TABLE exchange_origins (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        kind text NOT NULL CONSTRAINT exchange_origins_kind_known CHECK (kind IN ('ci', 'staging', 'production')),
        method text NOT NULL,
        path text NOT NULL,
        status smallint NOT NULL,
        request_content_type text,
        request_shape text,
        response_content_type text,
        response_shape text,
        row_id uuid NOT NULL,
        row_first_seen timestamptz NOT NULL,
        first_seen timestamptz NOT NULL,
        commit text,
        build text,
        CONSTRAINT exchange_origins_row_fk FOREIGN KEY (project_id, row_id) REFERENCES environment_rows (project_id, id) ON DELETE CASCADE
      )`);
  await q.query(`CREATE UNIQUE INDEX exchange_origins_key ON exchange_origins (project_id, ${EXCHANGE_KEY}, kind)`);
  await q.query(`CREATE INDEX exchange_origins_row_idx ON exchange_origins (project_id, row_id)`);
  await q.query(`
      INSERT INTO exchange_origins (project_id, kind, method, path, status, request_content_type, request_shape,
                                    response_content_type, response_shape, row_id, row_first_seen, first_seen, commit, build)
      SELECT DISTINCT ON (o.project_id, o.method, o.path, o.status, coalesce(o.request_content_type, ' '), coalesce(o.request_shape, ' '),
                          coalesce(o.response_content_type, ' '), coalesce(o.response_shape, ' '), r.kind)
             o.project_id, r.kind, o.method, o.path, o.status, o.request_content_type, o.request_shape,
             o.response_content_type, o.response_shape, r.id, r.first_seen, o.first_seen, o.first_commit, o.first_build
        FROM evidence_observations o JOIN environment_rows r ON r.id = o.row_id AND r.project_id = o.project_id
       ORDER BY o.project_id, o.method, o.path, o.status, coalesce(o.request_content_type, ' '), coalesce(o.request_shape, ' '),
                coalesce(o.response_content_type, ' '), coalesce(o.response_shape, ' '), r.kind, o.first_seen, r.first_seen, r.id`);
}

/**
 * Where a diff's traffic was first seen (issue 18), cheap at any size: `exchange_origins` keeps,
 * per project, distinct exchange (method, path, status, content types, shape fingerprints) and
 * kind of environment, the first row whose evidence had it (by the exchange's `first_seen` there,
 * then the row's first evidence, then its id: what reading `evidence_observations` of every row
 * decided before), with the commit and build of the batch that brought it. A page of diffs then
 * costs one index probe per exchange, not one heap page per row that has it (500 rows per exchange
 * at the bench's worst). The fold writes it in the statement that adds exchanges to a row, only
 * for exchanges new to the row; regrouping recomputes the paths it moves.
 *
 * `evidence_observations` gains `first_commit` and `first_build`: the commit and build of the
 * batch that first brought each exchange to its row (a pull request's row follows its pushes, so
 * the row's own commit is the newest). Both are nullable without a default, so adding them does
 * not rewrite the table; evidence kept before has them null, and readers then name the row's
 * commit and build as before. The origins of that evidence are filled in here from it.
 */
export class ExchangeOrigins1795890573516 implements MigrationInterface {
  name = 'ExchangeOrigins1795890573516';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE evidence_observations ADD COLUMN first_commit text, ADD COLUMN first_build text');
    await makeExchangeOrigins(q);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE exchange_origins');
    await q.query('ALTER TABLE evidence_observations DROP COLUMN first_commit, DROP COLUMN first_build');
  }
}
