import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { scopeOfRole } from '@spectator/shared';
import type { IncomingMessage } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { upgradeToken } from '../common/ws-upgrade';
import { ACCESS_KEY, type AuthenticatedRequest, ensureScope, type RouteAccess } from '../common/access';
import { DomainError, ErrorCode } from '../common/errors';
import { personLabel, type Principal } from '../common/principal';
import type { ProjectEntity } from '../projects/project.entity';
import { projectNotFound, ProjectsService } from '../projects/projects.service';
import { UsersService } from '../users/users.service';
import { bearerOf } from './bearer';
import { cookieNames, cookieOf } from './cookies';
import { OidcService } from './oidc.service';
import { TokensService } from './tokens.service';

export { CurrentPrincipal, CurrentProject, ensureScope, RequireScope } from '../common/access';

/** Methods that change nothing: the only ones a cookie session may use without the CSRF header. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The header a cookie session's state-changing request carries (the value `GET /me` gave). */
export const CSRF_HEADER = 'x-csrf-token';

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Authenticates the caller — a bearer token, else a person's session cookie — checks the route's
 * access and, for routes under `/projects/{p}`, resolves the project and the caller's right to it
 * (a token's project; a person's role in it). A cookie session must send `X-CSRF-Token` on every
 * request that is not GET, HEAD or OPTIONS: another site can make a browser send the cookie, but
 * cannot read the value to put in the header.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokensService,
    private readonly projects: ProjectsService,
    private readonly users: UsersService,
    private readonly oidc: OidcService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const needed = this.reflector.getAllAndOverride<RouteAccess | undefined>(ACCESS_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (needed === 'public') return true;
    if (needed === undefined) throw new DomainError(ErrorCode.Forbidden, 'route has no access rule');
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const principal = await this.authenticate(request.headers);
    if (principal.kind === 'person' && !SAFE_METHODS.has(request.method ?? 'GET')) {
      const sent = request.headers[CSRF_HEADER];
      if (typeof sent !== 'string' || !sameSecret(sent, principal.csrfToken))
        throw new DomainError(
          ErrorCode.Forbidden,
          `a signed-in session must send the ${CSRF_HEADER} header (its value is csrfToken of GET /api/v1/me) on changes`,
        );
    }
    request.principal = principal;
    const slug = request.params?.p;
    if (slug !== undefined) request.project = await this.projectFor(principal, slug);
    // Outside a project (creating one), `admin` is the instance's: the bootstrap token, not a project's.
    else if (needed === 'admin' && principal.kind === 'token' && principal.projectId !== null)
      throw new DomainError(
        ErrorCode.Forbidden,
        "this needs the bootstrap admin token: a project's token acts in its own project only",
      );
    ensureScope(principal, needed);
    return true;
  }

  /**
   * The caller of a request: its bearer token when it sends one, else the person of its session
   * cookie. @throws DomainError Unauthenticated when neither works.
   */
  async authenticate(headers: IncomingMessage['headers']): Promise<Principal> {
    const bearer = bearerOf(headers);
    if (bearer !== null || !this.oidc.enabled) return this.tokens.authenticate(bearer);
    const sessionId = cookieOf(headers, cookieNames(this.oidc.secureCookies).session);
    if (sessionId === null)
      throw new DomainError(
        ErrorCode.Unauthenticated,
        'sign in, or send a bearer token (Authorization: Bearer <token>)',
      );
    const session = await this.oidc.session(sessionId);
    if (session === null) throw new DomainError(ErrorCode.Unauthenticated, 'your session ended: sign in again');
    const { person } = session;
    return {
      kind: 'person',
      tokenId: null,
      name: personLabel(person),
      person,
      sessionHash: session.hash,
      csrfToken: session.csrfToken,
      role: null,
      scope: 'read',
      projectId: null,
      environments: null,
    };
  }

  /**
   * The caller of a WebSocket upgrade: a token (header or `bearer.<token>` sub-protocol), else a
   * session cookie — only from a page of this site (Origin = Host): browsers send cookies with any
   * site's WebSocket, and WebSockets are not bound by CORS.
   */
  async authenticateUpgrade(request: IncomingMessage): Promise<Principal> {
    const token = upgradeToken(request);
    if (token !== null || !this.oidc.enabled) return this.tokens.authenticate(token);
    const { origin, host } = request.headers;
    let sameSite = false;
    try {
      sameSite = origin !== undefined && new URL(origin).host === host;
    } catch {
      // a malformed Origin is not this site
    }
    if (!sameSite)
      throw new DomainError(ErrorCode.Forbidden, 'a signed-in session opens WebSockets from pages of this site only');
    return this.authenticate(request.headers);
  }

  /**
   * The project a principal may use, by slug: a token's own project (any for the bootstrap token);
   * for a person a project they have a role in, which is set on the principal. Another project is
   * answered as unknown (404).
   */
  async projectFor(principal: Principal, slug: string): Promise<ProjectEntity> {
    const project = await this.projects.bySlug(slug);
    if (principal.kind === 'person') {
      const role = await this.users.roleIn(principal.person, project.id);
      if (role === null) throw projectNotFound(slug);
      principal.role = role;
      principal.scope = scopeOfRole(role);
      return project;
    }
    if (principal.projectId !== null && principal.projectId !== project.id) throw projectNotFound(slug);
    return project;
  }
}
