import { DataSource, EntityManager } from 'typeorm';
import type { Queryable } from './queryable';

/** A node-postgres pool or client, as far as a named statement needs it. */
interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * The node-postgres pool or client behind `runner`: the data source's pool (TypeORM's PostgreSQL
 * driver keeps it as `master`), or the connection of a transaction's manager; null for anything
 * else (a stand-in `Queryable`), which then runs the text as usual.
 */
async function connectionOf(runner: Queryable): Promise<PgConnection | null> {
  if (runner instanceof DataSource)
    return ((runner.driver as { master?: PgConnection }).master ?? null) as PgConnection | null;
  const queryRunner = runner instanceof EntityManager ? runner.queryRunner : undefined;
  if (queryRunner === undefined || queryRunner.isReleased) return null;
  return (await queryRunner.connect()) as PgConnection;
}

/**
 * Runs `text` as a named prepared statement (node-postgres `{ name, text, values }`): each
 * connection parses it once and PostgreSQL may keep its plan, where TypeORM's `query` sends an
 * unnamed statement parsed and planned on every call. For statements run very often whose text is
 * large: the batch statement's parse and plan (14 CTEs) were half of its PostgreSQL CPU (issue 20).
 * `name` must belong to this `text` alone (node-postgres refuses a name reused with another text).
 * Errors are node-postgres's own (`code` on the error, not TypeORM's `driverError`).
 * @returns the rows.
 */
export async function queryPrepared<T>(runner: Queryable, name: string, text: string, values: unknown[]): Promise<T[]> {
  const connection = await connectionOf(runner);
  if (connection === null) return (await runner.query(text, values)) as T[];
  return (await connection.query({ name, text, values })).rows as T[];
}
