/**
 * The database's CHECK constraints on lifecycle steps and environment kinds hold the lists
 * `@spectator/shared` defines. Old migrations cannot change, so a list that grows in shared needs a
 * new migration that replaces the constraint; this test fails until it exists. Every CHECK that
 * lists kinds or steps is found by a value it lists, so a later table's unnamed CHECK is held to
 * the shared lists too. Migrations import nothing from shared (`migrations-are-frozen`): this is
 * where the two meet.
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

  it.each([
    [
      'environment kinds',
      'staging',
      [ENVIRONMENT_KINDS, MATRIX_KINDS],
      [
        'captures_environment_known',
        'tokens_environments_known',
        'environment_rows_kind_known',
        'runtime_buckets_environment_kind_check',
        'runtime_cells_environment_kind_check',
        'consumer_calls_environment_kind_check',
        'drift_origins_kind_check',
      ],
    ],
    [
      'lifecycle steps',
      'Appeared in Staging',
      [PROPOSAL_STEPS, PROPOSAL_STATUSES],
      ['proposals_status_known', 'proposal_steps_step_known'],
    ],
  ] as const)('every CHECK that lists %s lists one of the shared lists, in order', async (_, member, lists, known) => {
    const rows = (await ds.query(
      `SELECT conname FROM pg_constraint WHERE contype = 'c' AND pg_get_constraintdef(oid) LIKE $1 ORDER BY conname`,
      [`%'${member}'%`],
    )) as Array<{ conname: string }>;
    // At least the named ones above and those of later tables, whose CHECKs PostgreSQL named.
    expect(rows.map((row) => row.conname)).toEqual(expect.arrayContaining([...known]));
    for (const { conname } of rows) {
      const constants = await constantsOf(conname);
      const shared = lists.some((list) => JSON.stringify([...list]) === JSON.stringify(constants));
      // The constraint's name and its list in the message when it holds none of the shared lists.
      expect({ conname, constants: shared ? 'a shared list' : constants }).toEqual({
        conname,
        constants: 'a shared list',
      });
    }
  });
});
