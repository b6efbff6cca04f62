/** PostgreSQL errors worth one more try: serialization failure, deadlock. */
const RETRYABLE = new Set(['40001', '40P01']);

/**
 * Runs a transaction again (up to 3 attempts in all) when PostgreSQL aborted it for a
 * serialization failure or a deadlock, which concurrent writers of the same rows can cause.
 */
export async function withRetry<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const code =
        (error as { code?: string; driverError?: { code?: string } }).driverError?.code ??
        (error as { code?: string }).code;
      if (attempt >= 3 || code === undefined || !RETRYABLE.has(code)) throw error;
    }
  }
}
