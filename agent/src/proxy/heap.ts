import v8 from 'node:v8';

/** The V8 flag `sweepArrayBuffersInPause` sets (exported for the test). */
export const ARRAY_BUFFER_SWEEPING_FLAG = '--no-concurrent-array-buffer-sweeping';

let applied = false;

/**
 * Has V8 free the buffers a scavenge found dead within that scavenge, not later on a helper thread.
 *
 * Every body chunk the proxy forwards is a view into a buffer of the upstream socket's read, about
 * a body's size of them per request, dead as soon as the chunk is written. V8 counts such memory
 * as external until it is swept; swept on a helper thread, a scavenge leaves it counted (about
 * 32 MB: V8 scavenges when that much is held by young buffers) when V8 checks, right after the
 * scavenge, whether to start a mark-compact. That check adds external memory to the old generation
 * (Node 20's V8 11.3), so once a mark-compact has set a tight limit (V8 sets one from a low
 * old-generation allocation rate: old size + 8 MB + the young generation's size), every scavenge
 * starts another: in the agent forwarding 100 KB answers at one connection, ~100 mark-compacts
 * every 10 s, none retaining anything (docs/benchmarks.md, #18). Swept in the pause, the count is
 * the live buffers' (~0.5 MB) and the agent collects like any process with a 15 MB heap.
 *
 * Process-wide and set once; the cost is freeing those buffers on the main thread, in the pause:
 * forwarding 100 KB answers at one connection, a scavenge's pause was 10.7 ms (median) against
 * `@fastify/http-proxy`'s 0.94 ms (docs/benchmarks.md, session 22's quiet sitting).
 */
export function sweepArrayBuffersInPause(): void {
  if (applied) return;
  applied = true;
  v8.setFlagsFromString(ARRAY_BUFFER_SWEEPING_FLAG);
}
