import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Runtime minutes waiting for the roll-up found by environment row and minute (issue 18): the
 * version share (`RuntimeRepository.shareSteps`, `shareEndpoints`) and the gate's totals read every
 * endpoint of an environment, and the only index (`runtime_minutes_added_endpoint`: project,
 * environment kind, method, path) gave them every minute waiting of the environment kind, every
 * pull request's or build's, of any minute. Now a read of one row (`PR #42`, a build) reads that
 * row's minutes since its window's start, and a read of every row of a kind reads the minutes of
 * the window only (the minute checked in the index).
 */
export class RuntimeMinutesWaitingByEnvironment1795937000000 implements MigrationInterface {
  name = 'RuntimeMinutesWaitingByEnvironment1795937000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX runtime_minutes_added_environment
         ON runtime_minutes_added (project_id, environment_kind, environment_name, minute)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX runtime_minutes_added_environment');
  }
}
