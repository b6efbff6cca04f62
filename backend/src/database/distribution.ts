import type { Queryable } from '../common/queryable';

/**
 * Past one PostgreSQL (issue #20): the schema is kept so that Citus could distribute a project's
 * tables by their project, with `project_id` as the distribution column, and replicate a few small
 * global tables to every node (reference tables). `distributionProblems` reads the catalog and
 * names what stands in the way; `backend/test/distribution.test.ts` runs it after all migrations,
 * and docs/operations.md ("Citus") says what a move would take.
 */
export const DISTRIBUTION_COLUMN = 'project_id';

/**
 * Global tables, not of one project, that Citus would copy to every node (`create_reference_table`).
 * Each is small or written rarely, and read by key before any project is known:
 *  - `projects`: the distribution column's own table; a request names a project by slug (unique
 *    over all projects), and every project table's foreign key to it is then a local join;
 *  - `users`, `sessions`, `sign_in_requests`: a person signs in once for all the projects they are
 *    a member of; identities (issuer, subject) are unique over all projects;
 *  - `tokens`: a request's token is found by its hash before its project is known, and the
 *    bootstrap admin token belongs to no project (its `last_used_at` is written at most once a minute);
 *  - `shapes`: content-addressed body shapes (by fingerprint) shared by every project's
 *    observations; a shape is written once, when first seen anywhere.
 * Project tables may have foreign keys to them; they have none to project tables.
 */
export const REFERENCE_TABLES: readonly string[] = [
  'projects',
  'users',
  'sessions',
  'sign_in_requests',
  'tokens',
  'shapes',
];

/** Bookkeeping that would stay on the coordinator alone: TypeORM's list of applied migrations. */
export const COORDINATOR_TABLES: readonly string[] = ['migrations'];

/**
 * Project tables whose keys or foreign keys do not include `project_id` yet. This list only
 * shrinks: the test fails when a table listed here passes (take it off) and when a table not listed
 * fails (a new table must be keyed by project from the start). The goal is an empty list.
 */
export const NOT_YET_DISTRIBUTABLE: readonly string[] = [];

/** One thing that keeps a table from being distributed by project. */
export interface DistributionProblem {
  table: string;
  /** The constraint or index at fault, when the problem is one. */
  constraint: string | null;
  problem: string;
}

interface TableRow {
  table: string;
  /** `project_id`'s attribute number, null without one. */
  projectColumn: number | null;
  projectNotNull: boolean | null;
}

interface UniqueRow {
  table: string;
  name: string;
  kind: 'primary key' | 'unique constraint' | 'unique index';
  columns: number[];
}

interface ForeignKeyRow {
  table: string;
  name: string;
  referenced: string;
  columns: number[];
  referencedColumns: number[];
  /** `pg_constraint.confdeltype` / `confupdtype`: n = SET NULL, d = SET DEFAULT. */
  onDelete: string;
  onUpdate: string;
  /** The columns ON DELETE SET NULL / SET DEFAULT sets, null for all of the key's. */
  setColumns: number[] | null;
  projectColumn: number | null;
  referencedProjectColumn: number | null;
}

/**
 * Reads the catalog of the current schema and names each thing that keeps its tables from being
 * distributed by project: a table that is neither a reference table nor has a NOT NULL
 * `project_id`; a primary key, unique constraint or unique index of a project table without
 * `project_id`; a foreign key between project tables that does not pair `project_id` with
 * `project_id`, or that would set it to NULL or a default; a foreign key from a reference table to
 * a project table. Partitions are judged through their partitioned table.
 */
export async function distributionProblems(db: Queryable): Promise<DistributionProblem[]> {
  const tables = (await db.query(
    `SELECT c.relname AS "table", a.attnum AS "projectColumn", a.attnotnull AS "projectNotNull"
       FROM pg_class c
       LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = $1 AND NOT a.attisdropped
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      ORDER BY c.relname`,
    [DISTRIBUTION_COLUMN],
  )) as TableRow[];
  const uniques = (await db.query(
    `SELECT t.relname AS "table", coalesce(k.conname, x.relname) AS name,
            CASE WHEN i.indisprimary THEN 'primary key' WHEN k.oid IS NOT NULL THEN 'unique constraint' ELSE 'unique index' END AS kind,
            i.indkey::int2[] AS columns
       FROM pg_index i
       JOIN pg_class t ON t.oid = i.indrelid
       JOIN pg_class x ON x.oid = i.indexrelid
       LEFT JOIN pg_constraint k ON k.conindid = i.indexrelid AND k.conrelid = t.oid AND k.contype IN ('p', 'u')
      WHERE t.relnamespace = current_schema()::regnamespace AND t.relkind IN ('r', 'p') AND NOT t.relispartition AND i.indisunique
      ORDER BY 1, 2`,
  )) as UniqueRow[];
  const foreignKeys = (await db.query(
    `SELECT t.relname AS "table", k.conname AS name, r.relname AS referenced, k.conkey AS columns, k.confkey AS "referencedColumns",
            k.confdeltype AS "onDelete", k.confupdtype AS "onUpdate", k.confdelsetcols AS "setColumns",
            (SELECT attnum FROM pg_attribute WHERE attrelid = t.oid AND attname = $1 AND NOT attisdropped) AS "projectColumn",
            (SELECT attnum FROM pg_attribute WHERE attrelid = r.oid AND attname = $1 AND NOT attisdropped) AS "referencedProjectColumn"
       FROM pg_constraint k
       JOIN pg_class t ON t.oid = k.conrelid
       JOIN pg_class r ON r.oid = k.confrelid
      WHERE k.contype = 'f' AND t.relnamespace = current_schema()::regnamespace AND NOT t.relispartition AND k.conparentid = 0
      ORDER BY 1, 2`,
    [DISTRIBUTION_COLUMN],
  )) as ForeignKeyRow[];

  const reference = new Set(REFERENCE_TABLES);
  const coordinator = new Set(COORDINATOR_TABLES);
  const problems: DistributionProblem[] = [];
  for (const t of tables) {
    if (reference.has(t.table) || coordinator.has(t.table)) continue;
    if (t.projectColumn === null)
      problems.push({
        table: t.table,
        constraint: null,
        problem: `has no ${DISTRIBUTION_COLUMN} column and is no reference table`,
      });
    else if (!t.projectNotNull)
      problems.push({ table: t.table, constraint: null, problem: `${DISTRIBUTION_COLUMN} may be NULL` });
  }
  const projectColumnOf = new Map(tables.map((t) => [t.table, t.projectColumn]));
  for (const u of uniques) {
    if (reference.has(u.table) || coordinator.has(u.table)) continue;
    const column = projectColumnOf.get(u.table);
    if (column === null || column === undefined || !u.columns.includes(column))
      problems.push({
        table: u.table,
        constraint: u.name,
        problem: `${u.kind} does not include ${DISTRIBUTION_COLUMN}`,
      });
  }
  for (const f of foreignKeys) {
    if (coordinator.has(f.table)) continue;
    if (reference.has(f.table)) {
      if (!reference.has(f.referenced))
        problems.push({
          table: f.table,
          constraint: f.name,
          problem: `a reference table has a foreign key to project table ${f.referenced}`,
        });
      continue;
    }
    if (reference.has(f.referenced)) continue;
    const at = f.projectColumn === null ? -1 : f.columns.indexOf(f.projectColumn);
    if (at < 0 || f.referencedColumns[at] !== f.referencedProjectColumn) {
      problems.push({
        table: f.table,
        constraint: f.name,
        problem: `foreign key to ${f.referenced} does not pair ${DISTRIBUTION_COLUMN} with its ${DISTRIBUTION_COLUMN}`,
      });
      continue;
    }
    const setsProject =
      (['n', 'd'].includes(f.onDelete) && (f.setColumns === null || f.setColumns.includes(f.projectColumn!))) ||
      ['n', 'd'].includes(f.onUpdate);
    if (setsProject)
      problems.push({
        table: f.table,
        constraint: f.name,
        problem: `foreign key to ${f.referenced} would set ${DISTRIBUTION_COLUMN} to NULL or a default (name its other columns: ON DELETE SET NULL (col))`,
      });
  }
  return problems;
}
