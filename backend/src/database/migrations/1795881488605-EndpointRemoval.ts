import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Removal as a proposal (issue 19): a proposal may remove documented endpoints (`proposals.removes`,
 * its endpoints in mode `remove`), and approving it writes each endpoint's next major version marked
 * `removed` (documenting no request or responses). Removal proposals waiting for an evidence step
 * are looked up on every fold of an environment row, so they have a partial index of their own
 * (empty in a project that removes nothing).
 *
 * `down` deletes the endpoints of removal proposals (their proposals stay, with no endpoint) and
 * keeps removed versions as versions documenting nothing.
 */
export class EndpointRemoval1795881488605 implements MigrationInterface {
  name = 'EndpointRemoval1795881488605';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE endpoint_versions ADD COLUMN removed boolean NOT NULL DEFAULT false');
    await q.query('ALTER TABLE proposals ADD COLUMN removes boolean NOT NULL DEFAULT false');
    await q.query('CREATE INDEX proposals_removing_idx ON proposals (project_id) WHERE removes');
    await q.query(`
      ALTER TABLE proposal_endpoints DROP CONSTRAINT proposal_endpoints_mode_known,
        ADD CONSTRAINT proposal_endpoints_mode_known CHECK (mode IN ('extend', 'replace', 'remove'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM proposal_endpoints WHERE mode = 'remove'`);
    await q.query(`
      ALTER TABLE proposal_endpoints DROP CONSTRAINT proposal_endpoints_mode_known,
        ADD CONSTRAINT proposal_endpoints_mode_known CHECK (mode IN ('extend', 'replace'))`);
    await q.query('DROP INDEX proposals_removing_idx');
    await q.query('ALTER TABLE proposals DROP COLUMN removes');
    await q.query('ALTER TABLE endpoint_versions DROP COLUMN removed');
  }
}
