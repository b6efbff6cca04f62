import type { IncomingMessage } from 'node:http';

/** Path of the cookie that binds a started sign-in to the browser that started it. */
export const SIGN_IN_COOKIE_PATH = '/api/v1/auth';

/**
 * Cookie names. Over https the session cookie gets the `__Host-` prefix: browsers then accept it
 * only when Secure, for path `/` and without a Domain, so a sibling subdomain cannot plant one.
 */
export function cookieNames(secure: boolean): { session: string; signIn: string } {
  return secure
    ? { session: '__Host-spectator_session', signIn: '__Secure-spectator_signin' }
    : { session: 'spectator_session', signIn: 'spectator_signin' };
}

/** The value of one cookie of a request, or null. Values we set are base64url, so no decoding is needed. */
export function cookieOf(headers: IncomingMessage['headers'], name: string): string | null {
  const header = headers.cookie;
  if (typeof header !== 'string') return null;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim() || null;
  }
  return null;
}

/**
 * A `Set-Cookie` value: HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site
 * sub-requests such as a form POST from another site; sent on the top-level return from the
 * provider), Secure over https. `maxAgeSeconds` 0 deletes it.
 */
export function setCookie(
  name: string,
  value: string,
  options: { path: string; maxAgeSeconds: number; secure: boolean },
): string {
  return [
    `${name}=${value}`,
    `Path=${options.path}`,
    `Max-Age=${options.maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}
