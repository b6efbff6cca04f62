import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';

/** An undocumented endpoint the user has described and finished, waiting for Commit changes. */
export interface DraftEndpoint {
  method: string;
  path: string;
  description: string;
  /** Document the request and response bodies (the shapes), not only method, path and status codes. */
  documentBodies: boolean;
}

interface DraftsValue {
  drafts(captureId: string): DraftEndpoint[];
  finish(captureId: string, draft: DraftEndpoint): void;
  /** Finishes many at once ("select all"): a draft already there keeps its description and choice. */
  finishMany(captureId: string, drafts: readonly DraftEndpoint[]): void;
  update(captureId: string, method: string, path: string, change: Partial<DraftEndpoint>): void;
  remove(captureId: string, method: string, path: string): void;
  clear(captureId: string): void;
}

const DraftsContext = createContext<DraftsValue | null>(null);
const DRAFTS_KEY = 'spectator.drafts';
const same = (draft: DraftEndpoint, method: string, path: string) => draft.method === method && draft.path === path;

function loadDrafts(): Record<string, DraftEndpoint[]> {
  try {
    const value = JSON.parse(sessionStorage.getItem(DRAFTS_KEY) ?? '{}') as unknown;
    return value && typeof value === 'object' ? (value as Record<string, DraftEndpoint[]>) : {};
  } catch {
    return {};
  }
}

/**
 * Keeps the finished-but-not-committed endpoints per capture, for the session (a reload keeps
 * them, closing the tab drops them), so Finish → choose bodies → Commit changes can span screens.
 */
export function DraftsProvider({ children }: { children: ReactNode }) {
  const [byCapture, setByCapture] = useState(loadDrafts);
  useEffect(() => sessionStorage.setItem(DRAFTS_KEY, JSON.stringify(byCapture)), [byCapture]);

  const edit = useCallback((captureId: string, change: (list: DraftEndpoint[]) => DraftEndpoint[]) => {
    setByCapture((previous) => ({ ...previous, [captureId]: change(previous[captureId] ?? []) }));
  }, []);

  const value = useMemo<DraftsValue>(
    () => ({
      drafts: (captureId) => byCapture[captureId] ?? [],
      finish: (captureId, draft) =>
        edit(captureId, (list) => [...list.filter((d) => !same(d, draft.method, draft.path)), draft]),
      finishMany: (captureId, many) =>
        edit(captureId, (list) => [
          ...list,
          ...many.filter((draft) => !list.some((d) => same(d, draft.method, draft.path))),
        ]),
      update: (captureId, method, path, change) =>
        edit(captureId, (list) => list.map((d) => (same(d, method, path) ? { ...d, ...change } : d))),
      remove: (captureId, method, path) => edit(captureId, (list) => list.filter((d) => !same(d, method, path))),
      clear: (captureId) => edit(captureId, () => []),
    }),
    [byCapture, edit],
  );
  return <DraftsContext.Provider value={value}>{children}</DraftsContext.Provider>;
}

/** The drafts of the review; only used below `DraftsProvider`. */
export function useDrafts(): DraftsValue {
  const value = useContext(DraftsContext);
  if (!value) throw new Error('useDrafts: used outside DraftsProvider');
  return value;
}
