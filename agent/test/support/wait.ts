/** Poll `check` until it returns a truthy value (returned) or `timeoutMs` passes (throws naming `what`). */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 30_000,
  everyMs = 20,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
