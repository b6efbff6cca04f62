import { type CanActivate, createParamDecorator, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiParam } from '@nestjs/swagger';
import { scopeAllows, type TokenScope } from '@spectator/shared';
import type { IncomingMessage } from 'node:http';
import { DomainError, ErrorCode } from '../common/errors';
import { bearerOf } from './bearer';
import type { ProjectEntity } from '../projects/project.entity';
import { projectNotFound, ProjectsService } from '../projects/projects.service';
import { type Principal, TokensService } from './tokens.service';

const SCOPE_KEY = 'spectator:scope';

/** The scope a route needs (`public` for none). Every route must say; the guard refuses otherwise. */
export const RequireScope = (scope: TokenScope | 'public'): MethodDecorator & ClassDecorator =>
  SetMetadata(SCOPE_KEY, scope);

interface AuthenticatedRequest {
  headers: IncomingMessage['headers'];
  params?: Record<string, string>;
  principal?: Principal;
  project?: ProjectEntity;
}

/**
 * Authenticates the bearer token, checks the route's scope and, for routes under
 * `/projects/{p}`, resolves the project and checks the token belongs to it.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tokens: TokensService,
    private readonly projects: ProjectsService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const needed = this.reflector.getAllAndOverride<TokenScope | 'public' | undefined>(SCOPE_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (needed === 'public') return true;
    if (needed === undefined) throw new DomainError(ErrorCode.Forbidden, 'route has no access rule');
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const principal = await this.tokens.authenticate(bearerOf(request.headers));
    request.principal = principal;
    const slug = request.params?.p;
    if (slug !== undefined) request.project = await this.projectFor(principal, slug);
    ensureScope(principal, needed);
    return true;
  }

  /** The project a principal may use, by slug; another project's is answered as unknown (404). */
  async projectFor(principal: Principal, slug: string): Promise<ProjectEntity> {
    const project = await this.projects.bySlug(slug);
    if (principal.projectId !== null && principal.projectId !== project.id) throw projectNotFound(slug);
    return project;
  }
}

/** @throws DomainError Forbidden when the principal's scope does not cover `needed`. */
export function ensureScope(principal: Principal, needed: TokenScope): void {
  if (!scopeAllows(principal.scope, needed)) {
    throw new DomainError(
      ErrorCode.Forbidden,
      `this needs a token with scope ${needed}; this token has scope ${principal.scope}`,
    );
  }
}

/**
 * The project resolved by the guard for a `/projects/{p}` route. It also declares the path
 * parameter `p` in the service's own OpenAPI document (`/api/docs`): the guard reads it, not a
 * `@Param`, so without this every `{p}` route was described without its parameter (an invalid
 * document, and a "Try it out" that could not call them).
 */
export const CurrentProject = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ProjectEntity => {
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
