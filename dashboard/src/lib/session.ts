/** The signed-in token and project, kept in sessionStorage: gone when the tab closes, never in localStorage. */
export interface Session {
  token: string;
  project: string | null;
}

const SESSION_KEY = 'spectator.session';

/** The session of this tab, or null when nobody signed in (or storage holds something else). */
export function loadSession(storage: Pick<Storage, 'getItem'> = sessionStorage): Session | null {
  const text = storage.getItem(SESSION_KEY);
  if (!text) return null;
  try {
    const value = JSON.parse(text) as Partial<Session>;
    if (typeof value.token !== 'string' || !value.token) return null;
    return { token: value.token, project: typeof value.project === 'string' && value.project ? value.project : null };
  } catch {
    return null;
  }
}

/** Keeps the session for this tab. */
export function saveSession(session: Session, storage: Pick<Storage, 'setItem'> = sessionStorage): void {
  storage.setItem(SESSION_KEY, JSON.stringify(session));
}

/** Forgets the session (sign out). */
export function clearSession(storage: Pick<Storage, 'removeItem'> = sessionStorage): void {
  storage.removeItem(SESSION_KEY);
}
