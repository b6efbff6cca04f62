/**
 * What moves a process's clock (`node scripts/at-instant.js <instant> …`: libfaketime by
 * `LD_PRELOAD` and `FAKETIME`), for the children tests start with an environment of their own: they
 * keep the test run's clock. A backend or agents 70 days apart from the test's clock gave the
 * runtime gate no CI rows at all.
 */
export function clockEnv(): NodeJS.ProcessEnv {
  return { LD_PRELOAD: process.env.LD_PRELOAD, FAKETIME: process.env.FAKETIME };
}
