import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import type { Logger } from 'pino';
import { DomainError, ErrorCode } from '../common/errors';
import { PeriodicJob } from '../common/periodic';
import type { Person } from '../common/principal';
import { isLoopback, type OidcConfig } from '../config/oidc';
import { RUNTIME, type Runtime } from '../config/runtime';
import { UsersService } from '../users/users.service';
import { SessionsRepository, SIGN_IN_REQUEST_MINUTES } from './sessions.repository';

/** How long the cookie binding a started sign-in to its browser lives: as long as the request row. */
export const SIGN_IN_SECONDS = SIGN_IN_REQUEST_MINUTES * 60;

/** SHA-256 hex of a session id: the `sessions` key, so the table holds no usable session. */
export function hashSessionId(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

/**
 * Sign-ins started and not finished within SIGN_IN_REQUEST_MINUTES, at most: anyone may start one,
 * so the rows they leave are bounded (far more than people sign in at once).
 */
export const MAX_SIGN_INS_UNDER_WAY = 10_000;

/** Groups a person may carry into a role mapping, at most; more are ignored (a bounded row). */
const MAX_GROUPS = 500;
const MAX_CLAIM_LENGTH = 400;

/** The groups of a claim: an array of strings, or one string; anything else is no group. */
export function groupsOf(claim: unknown): string[] {
  const values = Array.isArray(claim) ? claim : typeof claim === 'string' ? [claim] : [];
  const groups = values.filter((value): value is string => typeof value === 'string' && value.length > 0);
  return [...new Set(groups.map((group) => group.slice(0, MAX_CLAIM_LENGTH)))].slice(0, MAX_GROUPS);
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value.slice(0, MAX_CLAIM_LENGTH) : null;
}

/** Where to go after sign-in: a path of this site only (never another origin: no open redirect). */
export function safeReturnTo(value: unknown): string {
  return typeof value === 'string' && /^\/(?![/\\])[^\s]{0,500}$/.test(value) ? value : '/';
}

/** A finished sign-in: the new session's clear id (for the cookie only) and where to go. */
export interface SignedIn {
  sessionId: string;
  expiresAt: Date;
  returnTo: string;
  person: Person;
}

/**
 * OpenID Connect sign-in: authorization code flow with PKCE (S256), state and nonce, through
 * `openid-client`. The provider's metadata is discovered at the first sign-in (and again after a
 * failure), so the backend starts while the provider is away.
 */
@Injectable()
export class OidcService implements OnModuleInit, OnModuleDestroy {
  private readonly config: OidcConfig | null;
  private readonly sessionHours: number;
  private discovered: Promise<oidc.Configuration> | null = null;
  private readonly log: Logger;
  private readonly prune: PeriodicJob;

  constructor(
    @Inject(RUNTIME) runtime: Runtime,
    private readonly sessions: SessionsRepository,
    private readonly users: UsersService,
  ) {
    this.config = runtime.config.oidc;
    this.sessionHours = runtime.config.sessionHours;
    this.log = runtime.log.child({ module: 'oidc' });
    this.prune = new PeriodicJob('pruning expired sessions', 3_600_000, () => this.sessions.prune(), this.log);
  }

  onModuleInit(): void {
    this.prune.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.prune.stop();
  }

  /** Single sign-on is configured. */
  get enabled(): boolean {
    return this.config !== null;
  }

  get providerName(): string | null {
    return this.config?.providerName ?? null;
  }

  /** Cookies are Secure when people come back over https. */
  get secureCookies(): boolean {
    return this.config?.redirectUrl.protocol === 'https:';
  }

  get sessionSeconds(): number {
    return this.sessionHours * 3600;
  }

  private settings(): OidcConfig {
    if (this.config === null)
      throw new DomainError(ErrorCode.NotServed, 'single sign-on is not configured (SPECTATOR_OIDC_ISSUER)');
    return this.config;
  }

  private provider(): Promise<oidc.Configuration> {
    const config = this.settings();
    this.discovered ??= oidc
      .discovery(
        config.issuer,
        config.clientId,
        config.clientSecret ?? undefined,
        config.clientSecret === null ? oidc.None() : oidc.ClientSecretBasic(config.clientSecret),
        // Plain http only for a provider on this machine (tests, local Dex); the config refuses others.
        { timeout: 10, ...(isLoopback(config.issuer) ? { execute: [oidc.allowInsecureRequests] } : {}) },
      )
      .catch((error: unknown) => {
        this.discovered = null;
        this.log.warn({ err: error, issuer: config.issuer.href }, 'identity provider discovery failed');
        throw new DomainError(
          ErrorCode.ProviderUnavailable,
          `the identity provider ${config.issuer.href} could not be reached: ${(error as Error).message}`,
        );
      });
    return this.discovered;
  }

  /**
   * Starts a sign-in: a fresh state, nonce and PKCE verifier, kept server-side until the callback.
   * @returns the provider's authorization URL and the state (for the browser-binding cookie)
   */
  async begin(returnTo: unknown): Promise<{ url: URL; state: string }> {
    const config = this.settings();
    const provider = await this.provider();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const kept = await this.sessions.saveSignInRequest(
      { state, nonce, codeVerifier, returnTo: safeReturnTo(returnTo) },
      MAX_SIGN_INS_UNDER_WAY,
    );
    if (!kept)
      throw new DomainError(
        ErrorCode.ProviderUnavailable,
        `${MAX_SIGN_INS_UNDER_WAY} sign-ins are under way: try again in a few minutes`,
      );
    const url = oidc.buildAuthorizationUrl(provider, {
      redirect_uri: config.redirectUrl.href,
      scope: config.scopes,
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url, state };
  }

  /**
   * Finishes a sign-in from the provider's redirect: the state must be one we issued, unused,
   * recent, and the one this browser started (its cookie); the code is exchanged with the PKCE
   * verifier and the ID token's nonce checked. The person is recorded and a session created.
   * @throws DomainError Unauthenticated naming what failed.
   */
  async finish(query: URLSearchParams, browserState: string | null): Promise<SignedIn> {
    const config = this.settings();
    const refused = (why: string): DomainError => new DomainError(ErrorCode.Unauthenticated, `sign-in refused: ${why}`);
    const error = query.get('error');
    if (error !== null)
      throw refused(
        `the identity provider answered ${error}${query.has('error_description') ? `: ${query.get('error_description')}` : ''}`,
      );
    const state = query.get('state');
    if (!state) throw refused('the callback has no state');
    if (browserState !== state)
      throw refused('the state is not the one this browser started (start the sign-in again)');
    const request = await this.sessions.takeSignInRequest(state);
    if (request === null) throw refused('the state is unknown, already used or expired (start the sign-in again)');
    const provider = await this.provider();
    // openid-client takes redirect_uri from the URL it is given: the configured one, with the query received.
    const currentUrl = new URL(config.redirectUrl.href);
    currentUrl.search = query.toString();
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(provider, currentUrl, {
        pkceCodeVerifier: request.codeVerifier,
        expectedState: request.state,
        expectedNonce: request.nonce,
        idTokenExpected: true,
      });
    } catch (caught) {
      // openid-client wraps oauth4webapi's error, whose message names the check that failed (nonce, iss, aud).
      const cause = (caught as { cause?: unknown }).cause;
      throw refused(cause instanceof Error ? cause.message : (caught as Error).message);
    }
    const claims = tokens.claims();
    if (claims === undefined) throw refused('the provider sent no ID token');
    let info: Record<string, unknown> = {};
    if (provider.serverMetadata().userinfo_endpoint !== undefined) {
      try {
        info = await oidc.fetchUserInfo(provider, tokens.access_token, claims.sub);
      } catch (caught) {
        // The ID token is enough to sign in; userinfo only adds claims some providers keep out of it.
        this.log.warn({ err: caught }, 'userinfo failed; signing in with the ID token claims');
      }
    }
    const merged: Record<string, unknown> = { ...info, ...claims };
    const person = await this.users.signedIn({
      issuer: claims.iss,
      subject: claims.sub,
      name: text(merged.name) ?? text(merged.preferred_username),
      email: text(merged.email),
      groups: groupsOf(merged[config.groupsClaim] ?? info[config.groupsClaim]),
    });
    const sessionId = randomBytes(32).toString('base64url');
    const expiresAt = await this.sessions.createSession(
      hashSessionId(sessionId),
      person.id,
      randomBytes(24).toString('base64url'),
      this.sessionHours,
      tokens.id_token ?? null,
    );
    this.log.info({ user: person.id }, 'person signed in');
    return { sessionId, expiresAt, returnTo: request.returnTo, person };
  }

  /**
   * The person and CSRF token of a live session cookie value, or null. A session older than
   * SPECTATOR_OIDC_RECHECK_MINUTES ends here: its groups (so its roles) were read at sign-in, and a
   * new sign-in reads them again (a redirect through the provider while its own session lasts).
   * @throws DomainError Unauthenticated for a session that must sign in again
   */
  async session(sessionId: string): Promise<{ person: Person; csrfToken: string; hash: string } | null> {
    const hash = hashSessionId(sessionId);
    const minutes = this.settings().recheckMinutes;
    const session = await this.sessions.liveSession(hash, minutes);
    if (session === null) return null;
    if (session.recheck) {
      await this.sessions.deleteSession(hash);
      throw new DomainError(
        ErrorCode.Unauthenticated,
        `sign in again: groups and roles are read from the identity provider at sign-in, and trusted for ${minutes} minutes`,
      );
    }
    const person = await this.users.byId(session.userId);
    return person === null ? null : { person, csrfToken: session.csrfToken, hash };
  }

  /**
   * Ends a session (sign-out).
   * @returns where to send the browser to end the provider's session too (RP-initiated logout,
   *   back to SPECTATOR_OIDC_POST_LOGOUT_URL), or null when the provider has no end_session_endpoint
   */
  async end(hash: string): Promise<URL | null> {
    const ended = await this.sessions.deleteSession(hash);
    const config = this.settings();
    let provider: oidc.Configuration;
    try {
      provider = await this.provider();
    } catch {
      // Signed out here all the same; the provider cannot be reached to end its own session.
      return null;
    }
    if (provider.serverMetadata().end_session_endpoint === undefined) return null;
    return oidc.buildEndSessionUrl(provider, {
      post_logout_redirect_uri: config.postLogoutRedirectUrl.href,
      ...(ended?.idToken ? { id_token_hint: ended.idToken } : {}),
    });
  }
}
