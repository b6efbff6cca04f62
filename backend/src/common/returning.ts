import type { Queryable } from './queryable';

/**
 * Rows of an `UPDATE … RETURNING` or `DELETE … RETURNING`. TypeORM's PostgreSQL driver answers
 * those two commands with `[rows, affectedCount]` instead of the rows alone (other commands give
 * the rows), so reading them like a SELECT silently sees two "rows".
 */
export async function returningRows<T>(manager: Queryable, sql: string, parameters: unknown[]): Promise<T[]> {
  const result = (await manager.query(sql, parameters)) as [T[], number];
  return result[0];
}
