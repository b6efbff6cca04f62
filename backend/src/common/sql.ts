/** A SQL string literal of a constant (quotes doubled). Only for the code's own constants, never input. */
export function sqlLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * `CASE <column> WHEN <values[0]> THEN 0 WHEN <values[1]> THEN 1 … END`: a column's position in
 * an ordered list of constants (a lifecycle, say), so SQL sorts and compares in the list's order
 * without a copy of it. NULL for a value not in the list.
 */
export function sqlRank(column: string, values: readonly string[]): string {
  return `CASE ${column} ${values.map((value, rank) => `WHEN ${sqlLiteral(value)} THEN ${rank}`).join(' ')} END`;
}
