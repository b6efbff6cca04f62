import type { Logger } from 'pino';

/**
 * The tables a fold reads by key (besides writing them). Before a table has statistics PostgreSQL
 * guesses every condition's selectivity alike, and a fold's key lookups can take an index that
 * fits only part of the key: consumers' LOCK_ROWS read each key of a fold through
 * `consumer_calls_kind_day_idx` (project, kind skipped, day) and filtered the project's whole day,
 * ~10 buffers per key at 300 stored rows against 3 by the primary key once analysed (issue 20;
 * the scale bench's first phase, on a new database, read 100 buffers per row found).
 */
export const FOLD_TABLES = [
  'consumer_calls',
  'evidence_observations',
  'evidence_cells',
  'evidence_current',
  'evidence_queue',
  'runtime_minutes_added',
  'runtime_cells',
] as const;

/** How many times one process tries to analyse a table (ANALYZE skips a table it may not analyse, with a warning). */
const TRIES = 3;
/** Looks at the catalog at most this often (a table folds leave empty, e.g. runtime cells of agents without runtime, keeps it looking). */
const EVERY_MS = 1_000;

/**
 * Each fold table that holds rows but was never analysed (`reltuples` is -1 until the first
 * VACUUM or ANALYZE), with its first ANALYZE; autovacuum's threshold then takes over.
 */
const WITHOUT_STATISTICS = `
  SELECT c.relname AS name, pg_relation_size(c.oid) > 0 AS "holdsRows"
    FROM pg_class c
   WHERE c.oid = ANY(ARRAY(SELECT to_regclass(t) FROM unnest($1::text[]) AS t)) AND c.reltuples < 0`;

/**
 * A fold table's first statistics (issue 20), taken by the backend instead of left to autovacuum,
 * which comes by a minute or more after the table's first rows (`autovacuum_naptime`): in that
 * first minute of a new deployment (or of a new database) the fold's plans were made without
 * statistics, and prepared plans kept until the table's statistics changed. After each fold this
 * replica commits, while some fold table has none: `ANALYZE (SKIP_LOCKED)` of those that hold rows,
 * outside the fold's transaction (a small table's sample: milliseconds), one at a time per replica;
 * a table autovacuum or another replica is analysing is skipped and tried after a later fold. It
 * reads the catalog at most once a second, and once every fold table has statistics never again in
 * this process.
 */
export class FoldStatistics {
  private done = false;
  private running: Promise<void> | null = null;
  private next = 0;
  private readonly tries = new Map<string, number>();

  constructor(
    private readonly db: { query(text: string, values?: unknown[]): Promise<unknown> },
    private readonly log?: Logger,
  ) {}

  /** Called after a fold commits: resolves once the tables without statistics are analysed (or none was). Never rejects. */
  afterFold(): Promise<void> {
    if (this.done || (this.running === null && performance.now() < this.next)) return this.running ?? Promise.resolve();
    this.next = performance.now() + EVERY_MS;
    this.running ??= this.analyse()
      .catch((error: unknown) => this.log?.warn({ err: error }, "analysing the fold tables' first statistics failed"))
      .finally(() => (this.running = null));
    return this.running;
  }

  private async analyse(): Promise<void> {
    const missing = (await this.db.query(WITHOUT_STATISTICS, [FOLD_TABLES])) as Array<{
      name: string;
      holdsRows: boolean;
    }>;
    const due = missing.filter(({ name }) => (this.tries.get(name) ?? 0) < TRIES);
    if (due.length === 0) {
      this.done = true;
      return;
    }
    const grown = due.filter(({ holdsRows }) => holdsRows).map(({ name }) => name);
    if (grown.length === 0) return;
    for (const name of grown) this.tries.set(name, (this.tries.get(name) ?? 0) + 1);
    // Names from FOLD_TABLES only (quoted all the same).
    await this.db.query(`ANALYZE (SKIP_LOCKED) ${grown.map((name) => `"${name}"`).join(', ')}`);
  }
}
