import { LruCache } from '../common/lru-cache';

/** An endpoint of a capture, as the views and the batches' touched keys name it. */
export interface EndpointKey {
  method: string;
  path: string;
}

/** The text an endpoint is keyed by in maps and sets (validated methods and paths hold no NUL). */
export function endpointKeyText(endpoint: EndpointKey): string {
  return `${endpoint.method}\u0000${endpoint.path}`;
}

/**
 * Order of the views' lists: by path, then method (`localeCompare`, the order the API has always
 * had). The queries return rows in byte order (cheap in PostgreSQL, unlike a locale-aware sort),
 * which is close to this order for paths, so sorting them does little work.
 */
export function byPathThenMethod(a: EndpointKey, b: EndpointKey): number {
  return a.path.localeCompare(b.path) || a.method.localeCompare(b.method);
}

/**
 * What a capture's views depend on, read in one snapshot before a view's own queries (see
 * `CaptureViews.readInputs`): the snapshot itself (`pg_current_snapshot()` as text), when it
 * was taken (PostgreSQL's clock, epoch seconds), the project's documentation revision and the
 * capture's rules in effect (as JSON).
 */
export interface ViewBasis {
  snapshot: string;
  takenAt: number;
  documentation: string;
  rules: string;
}

/**
 * What changed in a capture's summaries since a kept view's basis: the endpoints touched by batches
 * that basis's snapshot did not see (empty: none), or null when that is unknown or too many to be
 * worth patching.
 */
export type ChangedEndpoints = readonly EndpointKey[] | null;

/** How a view is made: in full, or from a kept value and the endpoints that changed since. */
export interface ViewUpkeep<T> {
  compute(): Promise<T>;
  /** The view with every changed endpoint read again; the kept value is shared, not to be modified. */
  patch(kept: T, changed: readonly EndpointKey[]): Promise<T>;
}

/**
 * A kept view older than this is computed again rather than patched: batch ids are pruned after
 * `SPECTATOR_BATCH_RETENTION_DAYS` (at least one day) and keep their touched keys for ten minutes
 * more than this (`TOUCHED_KEYS_SECONDS` in ingest/), so the batches committed since a basis this
 * recent are all still there to be found, with their keys.
 */
export const MAX_PATCHED_AGE_SECONDS = 60 * 60;

/**
 * Results of one view per capture, each kept with the basis it was read at. The rows of a view are
 * read after its basis, so for every endpoint a kept view is at least as new as its basis, and
 * every batch its snapshot did not see is read again by the next patch: a patched view equals a
 * full computation, on whichever replica the batches were written.
 */
export class KeptViews<T> {
  private readonly entries: LruCache<string, { basis: ViewBasis; value: T }>;

  constructor(capacity: number) {
    this.entries = new LruCache(capacity);
  }

  /** The basis of the view kept for `key`, to read what changed since (undefined: none kept). */
  basisOf(key: string): ViewBasis | undefined {
    return this.entries.get(key)?.basis;
  }

  /**
   * The view for `key` at `current`: the kept one when nothing changed since `since` (the basis
   * `changed` was read against), patched when only some endpoints did, else computed in full
   * (nothing kept, another basis kept by now, documentation or rules changed, too old, changes
   * unknown). The result is kept with `current`.
   */
  async get(
    key: string,
    since: ViewBasis | undefined,
    current: ViewBasis,
    changed: ChangedEndpoints,
    upkeep: ViewUpkeep<T>,
  ): Promise<T> {
    const kept = this.entries.get(key);
    let value: T;
    if (kept === undefined || kept.basis !== since || changed === null || !continues(kept.basis, current))
      value = await upkeep.compute();
    else if (changed.length === 0) value = kept.value;
    else value = await upkeep.patch(kept.value, changed);
    // A concurrent request may have kept a newer basis meanwhile: either entry is exact (see above).
    this.entries.set(key, { basis: current, value });
    return value;
  }
}

/** Whether a view kept at `kept` can be brought to `current` by patching changed endpoints. */
function continues(kept: ViewBasis, current: ViewBasis): boolean {
  return (
    kept.documentation === current.documentation &&
    kept.rules === current.rules &&
    current.takenAt - kept.takenAt < MAX_PATCHED_AGE_SECONDS
  );
}

/**
 * A sorted list (`byPathThenMethod`) with the entries of `changed` endpoints replaced by `fresh`
 * (any order, only changed endpoints): one merge pass, the kept list is not modified.
 */
export function patchSortedList<T extends EndpointKey>(
  kept: readonly T[],
  changed: readonly EndpointKey[],
  fresh: readonly T[],
): T[] {
  const replaced = new Set(changed.map(endpointKeyText));
  const incoming = [...fresh].sort(byPathThenMethod);
  const merged: T[] = [];
  let next = 0;
  for (const item of kept) {
    if (replaced.has(endpointKeyText(item))) continue;
    while (next < incoming.length && byPathThenMethod(incoming[next] as T, item) < 0)
      merged.push(incoming[next++] as T);
    merged.push(item);
  }
  while (next < incoming.length) merged.push(incoming[next++] as T);
  return merged;
}

/**
 * The upkeep of a list view sorted by `byPathThenMethod`, from `read`: the list's entries (any
 * order) of all of a capture's endpoints, or of `only` those.
 */
export function sortedListUpkeep<T extends EndpointKey>(
  read: (only?: readonly EndpointKey[]) => Promise<T[]>,
): ViewUpkeep<ViewList<T>> {
  return {
    compute: async () => new ViewList((await read()).sort(byPathThenMethod)),
    patch: async (kept, changed) => new ViewList(patchSortedList(kept.items, changed, await read(changed))),
  };
}

/** A view's list and, once asked for, its JSON text, made once however often the view is sent. */
export class ViewList<T> {
  private text: string | undefined;

  constructor(readonly items: readonly T[]) {}

  /** The list as the API sends it. */
  json(): string {
    this.text ??= JSON.stringify(this.items);
    return this.text;
  }

  /**
   * One page as the API sends it: up to `limit` items after the key `after` (an item's own key, or
   * any key: the page starts at the next item in `byPathThenMethod` order, so an item that left
   * the view since does not lose the place). Without either, the whole list.
   */
  page(after: EndpointKey | undefined, limit: number | undefined): string {
    if (after === undefined && limit === undefined) return this.json();
    return JSON.stringify(this.slice(after, limit));
  }

  /** The items of one page (`page`): up to `limit` after the key `after`. */
  slice(after: EndpointKey | undefined, limit: number | undefined): readonly T[] {
    const items = this.items as ReadonlyArray<T & EndpointKey>;
    let start = 0;
    if (after !== undefined) {
      let end = items.length;
      while (start < end) {
        const middle = (start + end) >>> 1;
        if (byPathThenMethod(items[middle] as EndpointKey, after) <= 0) start = middle + 1;
        else end = middle;
      }
    }
    return this.items.slice(start, limit === undefined ? undefined : start + limit);
  }
}
