/** Single sign-on through an OpenID Connect provider (SPECTATOR_OIDC_*); `null` in BackendConfig when not configured. */
export interface OidcConfig {
  /** The provider's issuer URL; its `/.well-known/openid-configuration` is read at the first sign-in. */
  issuer: URL;
  clientId: string;
  /** `null`: a public client (PKCE only, no client authentication). */
  clientSecret: string | null;
  /** Where the provider sends people back: `<public URL>/api/v1/auth/callback`. https makes the cookies Secure. */
  redirectUrl: URL;
  /** Space-separated scopes asked for (default `openid email profile`). */
  scopes: string;
  /** The ID token or userinfo claim that lists the person's groups (default `groups`). */
  groupsClaim: string;
  /** Groups whose members are admin of every project and may create projects. */
  adminGroups: string[];
  /** The provider's name on the sign-in button. */
  providerName: string;
  /**
   * Minutes a sign-in's groups (so its roles) are trusted: a session older than this must sign in
   * again, which re-reads them (SPECTATOR_OIDC_RECHECK_MINUTES, default 60).
   */
  recheckMinutes: number;
  /** Where the provider sends people after signing out there (RP-initiated logout); default the site's root. */
  postLogoutRedirectUrl: URL;
}

/** What a caller of `startBackend` may pass instead of the SPECTATOR_OIDC_* variables. */
export interface OidcOptions {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  redirectUrl: string;
  scopes?: string;
  groupsClaim?: string;
  adminGroups?: string[];
  providerName?: string;
  recheckMinutes?: number;
  postLogoutRedirectUrl?: string;
}

/** The bounds of SPECTATOR_OIDC_RECHECK_MINUTES. */
export const RECHECK_MINUTES = { fallback: 60, min: 1, max: 1440 };

function parseUrl(text: string, name: string, problems: string[]): URL | null {
  try {
    const url = new URL(text);
    if (url.protocol === 'https:' || url.protocol === 'http:') return url;
  } catch {
    // reported below
  }
  problems.push(`${name} must be an http(s) URL`);
  return null;
}

/**
 * Single sign-on from the options or their variables: SPECTATOR_OIDC_ISSUER switches it on and then
 * needs SPECTATOR_OIDC_CLIENT_ID and SPECTATOR_OIDC_REDIRECT_URL; the secret, scopes, groups
 * claim, admin groups and name are optional.
 * @returns null when no issuer is configured; pushes a problem per bad variable.
 */
export function parseOidc(raw: Partial<OidcOptions>, problems: string[]): OidcConfig | null {
  if (raw.issuer === undefined) {
    if (raw.clientId !== undefined || raw.redirectUrl !== undefined)
      problems.push(
        'SPECTATOR_OIDC_ISSUER is needed when SPECTATOR_OIDC_CLIENT_ID or SPECTATOR_OIDC_REDIRECT_URL is set',
      );
    return null;
  }
  const before = problems.length;
  const issuer = parseUrl(raw.issuer, 'SPECTATOR_OIDC_ISSUER', problems);
  if (issuer !== null && issuer.protocol === 'http:' && !isLoopback(issuer))
    problems.push('SPECTATOR_OIDC_ISSUER must be https (http only on a loopback address, for local tests)');
  if (!raw.clientId) problems.push('SPECTATOR_OIDC_CLIENT_ID is needed with SPECTATOR_OIDC_ISSUER');
  const redirectUrl =
    raw.redirectUrl === undefined
      ? (problems.push('SPECTATOR_OIDC_REDIRECT_URL is needed with SPECTATOR_OIDC_ISSUER'), null)
      : parseUrl(raw.redirectUrl, 'SPECTATOR_OIDC_REDIRECT_URL', problems);
  const scopes = raw.scopes ?? 'openid email profile';
  if (!scopes.split(/\s+/).includes('openid')) problems.push('SPECTATOR_OIDC_SCOPES must include openid');
  const groupsClaim = raw.groupsClaim ?? 'groups';
  if (!/^[\w.:/-]{1,200}$/.test(groupsClaim))
    problems.push('SPECTATOR_OIDC_GROUPS_CLAIM must be a claim name (letters, digits, _ . : / -)');
  const recheckMinutes = raw.recheckMinutes ?? RECHECK_MINUTES.fallback;
  if (!Number.isInteger(recheckMinutes) || recheckMinutes < RECHECK_MINUTES.min || recheckMinutes > RECHECK_MINUTES.max)
    problems.push(
      `SPECTATOR_OIDC_RECHECK_MINUTES must be a whole number of minutes from ${RECHECK_MINUTES.min} to ${RECHECK_MINUTES.max}`,
    );
  const postLogoutRedirectUrl =
    raw.postLogoutRedirectUrl === undefined
      ? redirectUrl && new URL('/', redirectUrl)
      : parseUrl(raw.postLogoutRedirectUrl, 'SPECTATOR_OIDC_POST_LOGOUT_URL', problems);
  if (
    problems.length > before ||
    issuer === null ||
    redirectUrl === null ||
    postLogoutRedirectUrl === null ||
    !raw.clientId
  )
    return null;
  return {
    issuer,
    clientId: raw.clientId,
    clientSecret: raw.clientSecret ?? null,
    redirectUrl,
    scopes,
    groupsClaim,
    adminGroups: raw.adminGroups ?? [],
    providerName: raw.providerName ?? 'single sign-on',
    recheckMinutes,
    postLogoutRedirectUrl,
  };
}

/** Whether a URL names this machine (localhost, 127.0.0.0/8, ::1): the only place plain-http providers are trusted. */
export function isLoopback(url: URL): boolean {
  return url.hostname === 'localhost' || url.hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(url.hostname);
}
