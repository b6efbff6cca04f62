import pg from 'pg';

/**
 * The tables of the database that hold `text` anywhere in a row (as JSON text): the check that an
 * observed value (a canary sent in a body, query or header) never reached the backend's storage.
 */
export async function tablesContaining(databaseUrl: string, text: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = (
      await client.query<{ tablename: string }>(
        `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
      )
    ).rows.map((r) => r.tablename);
    const leaked: string[] = [];
    for (const table of tables) {
      const found = await client.query(`SELECT 1 FROM ${table} t WHERE row_to_json(t)::text LIKE $1 LIMIT 1`, [
        `%${text}%`,
      ]);
      if (found.rowCount) leaked.push(table);
    }
    return leaked;
  } finally {
    await client.end();
  }
}
