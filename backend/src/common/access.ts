import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiParam } from '@nestjs/swagger';
import { type Access, roleAllows, tokenAllows } from '@spectator/shared';
import type { IncomingMessage } from 'node:http';
import { DomainError, ErrorCode } from './errors';
import type { Principal } from './principal';

export const ACCESS_KEY = 'spectator:access';

/** What a route needs: an access level (a role for people, a scope for tokens), `agent`, or `public`. */
export type RouteAccess = Access | 'agent' | 'public';

/**
 * What a route needs (`public` for nothing). Every route must say; the guard refuses otherwise.
 * For people `read` is viewer, `write` editor, `approve` approver, `admin` admin; for tokens
 * `approve` is the `write` scope. The service's own OpenAPI document (`/api/docs`) states it on
 * every operation as `x-spectator-access`.
 */
export const RequireScope = (access: RouteAccess): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(ACCESS_KEY, access), ApiExtension('x-spectator-access', access));

/** The request as the guard leaves it. */
export interface AuthenticatedRequest {
  method?: string;
  headers: IncomingMessage['headers'];
  params?: Record<string, string>;
  principal?: Principal;
  project?: unknown;
}

/**
 * The project resolved by the guard for a `/projects/{p}` route. It also declares the path
 * parameter `p` in the service's own OpenAPI document (`/api/docs`): the guard reads it, not a
 * `@Param`, so without this every `{p}` route was described without its parameter (an invalid
 * document, and a "Try it out" that could not call them).
 */
export const CurrentProject = createParamDecorator(
  (_data: unknown, context: ExecutionContext): unknown => {
    const project = context.switchToHttp().getRequest<AuthenticatedRequest>().project;
    if (!project) throw new Error('CurrentProject used on a route without {p}');
    return project;
  },
  [
    (target: object, key: string | symbol | undefined) => {
      if (key === undefined) return;
      const descriptor = Object.getOwnPropertyDescriptor(target, key);
      if (descriptor)
        ApiParam({ name: 'p', description: 'the project slug', schema: { type: 'string' } })(target, key, descriptor);
    },
  ],
);

/** The authenticated caller. */
export const CurrentPrincipal = createParamDecorator((_data: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a public route');
  return principal;
});

/**
 * @throws DomainError Forbidden when the principal may not do what a route needs: a person's role
 * in the route's project (outside a project, `admin` needs an instance admin), a token's scope.
 */
export function ensureScope(principal: Principal, needed: Access | 'agent'): void {
  if (principal.kind === 'token') {
    if (!tokenAllows(principal.scope, needed))
      throw new DomainError(
        ErrorCode.Forbidden,
        `this needs a token with scope ${needed === 'approve' ? 'write' : needed}; this token has scope ${principal.scope}`,
      );
    return;
  }
  if (needed === 'agent') throw new DomainError(ErrorCode.Forbidden, 'only agent tokens stream traffic');
  if (principal.role === null) {
    if (needed === 'admin' && !principal.person.instanceAdmin)
      throw new DomainError(
        ErrorCode.Forbidden,
        'this needs an instance admin (a group of SPECTATOR_OIDC_ADMIN_GROUPS)',
      );
    return;
  }
  if (!roleAllows(principal.role, needed))
    throw new DomainError(
      ErrorCode.Forbidden,
      `this needs the ${ROLE_FOR[needed]} role in this project; you are ${principal.role}`,
    );
}

const ROLE_FOR: Record<Access, string> = { read: 'viewer', write: 'editor', approve: 'approver', admin: 'admin' };
