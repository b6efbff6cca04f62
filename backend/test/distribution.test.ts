/**
 * Past one PostgreSQL (issue #20): after all migrations, every table is a reference table or a
 * project table that Citus could distribute by `project_id` (docs/operations.md, "Citus"). Tables
 * in NOT_YET_DISTRIBUTABLE are let through only while they still fail: the list only shrinks.
 */
import type { DataSource } from 'typeorm';
import type { Queryable } from '../src/common/queryable';
import {
  COORDINATOR_TABLES,
  distributionProblems,
  NOT_YET_DISTRIBUTABLE,
  REFERENCE_TABLES,
  type DistributionProblem,
} from '../src/database/distribution';
import { createMigratedDatabase, type MigratedDatabase } from './support';

let database: MigratedDatabase;
let ds: DataSource;
beforeAll(async () => {
  database = await createMigratedDatabase();
  ds = database.ds;
});
afterAll(() => database.close());

const said = (p: DistributionProblem): string =>
  `${p.table}${p.constraint === null ? '' : ` ${p.constraint}`}: ${p.problem}`;

async function tablesOf(db: Queryable): Promise<string[]> {
  const rows = (await db.query(
    `SELECT relname AS name FROM pg_class
      WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p') AND NOT relispartition ORDER BY 1`,
  )) as Array<{ name: string }>;
  return rows.map((t) => t.name);
}

describe('the schema, for Citus with the project as distribution column', () => {
  it('keys every project table by project_id, foreign keys too (or lists the table as not yet)', async () => {
    const pending = new Set(NOT_YET_DISTRIBUTABLE);
    const problems = await distributionProblems(ds);
    expect(problems.filter((p) => !pending.has(p.table)).map(said)).toEqual([]);
  });

  it('lists as not yet only tables that exist and still fail (the list only shrinks)', async () => {
    const tables = await tablesOf(ds);
    const failing = new Set((await distributionProblems(ds)).map((p) => p.table));
    expect(NOT_YET_DISTRIBUTABLE.filter((t) => !tables.includes(t)).map((t) => `${t}: no such table`)).toEqual([]);
    expect(
      NOT_YET_DISTRIBUTABLE.filter((t) => !failing.has(t)).map(
        (t) => `${t}: passes, take it off NOT_YET_DISTRIBUTABLE`,
      ),
    ).toEqual([]);
  });

  it('names reference and coordinator tables that exist, each in one list', async () => {
    const tables = await tablesOf(ds);
    const listed = [...REFERENCE_TABLES, ...COORDINATOR_TABLES, ...NOT_YET_DISTRIBUTABLE];
    expect(listed.filter((t) => !tables.includes(t))).toEqual([]);
    expect(listed.filter((t, i) => listed.indexOf(t) !== i)).toEqual([]);
  });
});

describe('distributionProblems', () => {
  it('names each table and constraint that keeps a schema from being distributed by project', async () => {
    const runner = ds.createQueryRunner();
    try {
      await runner.query('CREATE SCHEMA faults');
      await runner.query('SET search_path TO faults');
      await runner.query(`
        CREATE TABLE projects (id uuid PRIMARY KEY, slug text NOT NULL UNIQUE);
        CREATE TABLE widgets (
          project_id uuid NOT NULL REFERENCES projects (id),
          id uuid NOT NULL,
          slug text NOT NULL,
          PRIMARY KEY (project_id, id),
          CONSTRAINT widgets_slug_unique UNIQUE (slug),
          CONSTRAINT widgets_id_unique UNIQUE (id)
        );
        CREATE UNIQUE INDEX widgets_lower_slug ON widgets (lower(slug));
        CREATE UNIQUE INDEX widgets_project_lower_slug ON widgets (lower(slug), project_id);
        CREATE TABLE parts (
          project_id uuid NOT NULL,
          id uuid PRIMARY KEY,
          widget_id uuid,
          spare_id uuid,
          CONSTRAINT parts_widget_fk FOREIGN KEY (widget_id) REFERENCES widgets (id),
          CONSTRAINT parts_nulling_fk FOREIGN KEY (project_id, widget_id) REFERENCES widgets (project_id, id) ON DELETE SET NULL,
          CONSTRAINT parts_spare_fk FOREIGN KEY (project_id, spare_id) REFERENCES widgets (project_id, id) ON DELETE SET NULL (spare_id),
          CONSTRAINT parts_project_fk FOREIGN KEY (project_id) REFERENCES projects (id)
        );
        CREATE TABLE loose (id uuid PRIMARY KEY);
        CREATE TABLE maybe (project_id uuid REFERENCES projects (id), at date, PRIMARY KEY (at));
        CREATE TABLE users (id uuid PRIMARY KEY, project_id uuid, widget_id uuid,
          CONSTRAINT users_widget_fk FOREIGN KEY (project_id, widget_id) REFERENCES widgets (project_id, id));
        CREATE TABLE runs (project_id uuid NOT NULL, at date NOT NULL, n int, PRIMARY KEY (project_id, at)) PARTITION BY RANGE (at);
        CREATE TABLE runs_2026 PARTITION OF runs FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
        CREATE TABLE hops (project_id uuid NOT NULL, at date NOT NULL, id bigint, PRIMARY KEY (id, at)) PARTITION BY RANGE (at);
        CREATE TABLE hops_2026 PARTITION OF hops FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');`);
      const problems = (await distributionProblems(runner.manager)).map(said).sort();
      expect(problems).toEqual(
        [
          'hops hops_pkey: primary key does not include project_id',
          'loose: has no project_id column and is no reference table',
          'loose loose_pkey: primary key does not include project_id',
          'maybe: project_id may be NULL',
          'maybe maybe_pkey: primary key does not include project_id',
          'parts parts_nulling_fk: foreign key to widgets would set project_id to NULL or a default (name its other columns: ON DELETE SET NULL (col))',
          'parts parts_pkey: primary key does not include project_id',
          'parts parts_widget_fk: foreign key to widgets does not pair project_id with its project_id',
          'users users_widget_fk: a reference table has a foreign key to project table widgets',
          'widgets widgets_id_unique: unique constraint does not include project_id',
          'widgets widgets_lower_slug: unique index does not include project_id',
          'widgets widgets_slug_unique: unique constraint does not include project_id',
        ].sort(),
      );
    } finally {
      await runner.query('RESET search_path');
      await runner.query('DROP SCHEMA faults CASCADE');
      await runner.release();
    }
  });
});
