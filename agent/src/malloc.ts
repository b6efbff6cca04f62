/** glibc's malloc keeps this much of the heap's top when it gives memory back (bytes, 16 MiB). */
export const MALLOC_TOP_PAD = 16 * 1024 * 1024;

/** What the agent's process runs with: glibc reads it once, at the process's first allocation. */
export const AGENT_MALLOC_ENV: Readonly<Record<string, string>> = { MALLOC_TOP_PAD_: String(MALLOC_TOP_PAD) };

/** Set beside `AGENT_MALLOC_ENV` when the agent put it there itself (so an app it runs does not inherit it). */
export const AGENT_MALLOC_MARK = 'SPECTATOR_AGENT_MALLOC';

/** The parts of `process` `execWithAgentMalloc` reads (a parameter, so a test can pass its own). */
export interface ProcessLike {
  env: NodeJS.ProcessEnv;
  execPath: string;
  execArgv: string[];
  argv: string[];
  platform: NodeJS.Platform;
  /** Node 22.15 / 23.11 and later: replaces the process's program, keeping its process id. */
  execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never;
}

/**
 * Restarts this process in place (`execve`: same process id, so tini's child is still the agent)
 * with `MALLOC_TOP_PAD_` set, unless it already runs with one (the agent's or the user's).
 *
 * Why: every 100 KB body the proxy forwards passes through buffers of the upstream socket's reads,
 * freed together when a scavenge sweeps them. Freed at once they merge into glibc's top chunk, and
 * glibc gives all of it back to the system (`brk` down, tens of MB); the next few hundred
 * requests fault it in again, page by page: 7–20 faults and 2.5–4× the CPU a request
 * (docs/benchmarks.md, #18). With a top pad glibc keeps that much (16 MiB) when it trims, so the
 * next reads reuse memory already faulted in. Raising the trim threshold instead keeps every freed
 * byte below it and cost ~25 MB of peak RSS streaming 1 MB bodies; the pad bounds what is kept.
 *
 * Only on Linux, and only where Node can `execve` (22.15, 23.11 and later: the image's Node 24);
 * elsewhere the agent runs as before. Returns when nothing is to be done; otherwise does not return.
 */
export function execWithAgentMalloc(proc: ProcessLike): void {
  if (proc.platform !== 'linux' || typeof proc.execve !== 'function') return;
  if (Object.keys(AGENT_MALLOC_ENV).some((name) => proc.env[name] !== undefined)) return;
  proc.execve(proc.execPath, [proc.execPath, ...proc.execArgv, ...proc.argv.slice(1)], {
    ...proc.env,
    ...AGENT_MALLOC_ENV,
    [AGENT_MALLOC_MARK]: '1',
  });
}

/** The environment for an app the agent starts: without what the agent set for its own allocator. */
export function appEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env[AGENT_MALLOC_MARK] === undefined) return env;
  const copy = { ...env };
  for (const name of [AGENT_MALLOC_MARK, ...Object.keys(AGENT_MALLOC_ENV)]) delete copy[name];
  return copy;
}
