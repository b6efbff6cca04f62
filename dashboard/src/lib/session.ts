/**
 * The signed-in token and project, kept in sessionStorage: gone when the tab closes, never in
 * localStorage. A person signed in through single sign-on has no token (`null`): their session is
 * the backend's HttpOnly cookie, found again with `GET /me` at each load, and `csrfToken` goes
 * with each change they make.
 */
export interface Session {
  token: string | null;
  project: string | null;
  csrfToken?: string;
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

/** Keeps a token session for this tab (a cookie session is the cookie: nothing to keep). */
export function saveSession(session: Session, storage: Pick<Storage, 'setItem'> = sessionStorage): void {
  if (session.token !== null)
    storage.setItem(SESSION_KEY, JSON.stringify({ token: session.token, project: session.project }));
}

/** Forgets the session (sign out). */
export function clearSession(storage: Pick<Storage, 'removeItem'> = sessionStorage): void {
  storage.removeItem(SESSION_KEY);
}
