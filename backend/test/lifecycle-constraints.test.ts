/**
 * The database's CHECK constraints on lifecycle steps and environment kinds hold the lists
 * `@spectator/shared` defines. Old migrations cannot change, so a list that grows in shared needs a
 * new migration that replaces the constraint; this test fails until it exists.
 */
import { ENVIRONMENT_KINDS, MATRIX_KINDS, PROPOSAL_STATUSES, PROPOSAL_STEPS } from '@spectator/shared';
import type { DataSource } from 'typeorm';
import { createMigratedDatabase, type MigratedDatabase } from './support';

let database: MigratedDatabase;
let ds: DataSource;
beforeAll(async () => {
  database = await createMigratedDatabase();
  ds = database.ds;
});
afterAll(() => database.close());

/** The string constants of a constraint, in order, as PostgreSQL prints its definition (`'Open'::text`). */
async function constantsOf(constraint: string): Promise<string[]> {
  const [row] = (await ds.query(
    `SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint WHERE conname = $1`,
    [constraint],
  )) as Array<{ definition: string }>;
  if (!row) throw new Error(`no constraint ${constraint}`);
  return [...row.definition.matchAll(/'((?:[^']|'')*)'/g)].map((match) => (match[1] as string).replaceAll("''", "'"));
}

describe('CHECK constraints hold the shared lists', () => {
  it.each([
    ['proposals_status_known', PROPOSAL_STATUSES],
    ['proposal_steps_step_known', PROPOSAL_STEPS],
    ['captures_environment_known', ENVIRONMENT_KINDS],
    ['tokens_environments_known', ENVIRONMENT_KINDS],
    ['environment_rows_kind_known', MATRIX_KINDS],
    // Unnamed in its migration (RuntimeEvidence): PostgreSQL's name for a column's CHECK.
    ['runtime_buckets_environment_kind_check', MATRIX_KINDS],
  ] as const)('%s', async (constraint, list) => {
    expect(await constantsOf(constraint)).toEqual([...list]);
  });
});
