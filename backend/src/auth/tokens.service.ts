import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { EnvironmentKind, TokenResponse, TokenScope } from '@spectator/shared';
import { createHash, randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { DomainError, ErrorCode } from '../common/errors';
import { LruCache } from '../common/lru-cache';
import { actorOf, type Person, type Principal, type TokenPrincipal } from '../common/principal';
import { AuditService } from '../audit/audit.service';
import { UsersService } from '../users/users.service';
import { TokenWatch } from './token-watch';
import { tokensRepository, type TokenRow } from './tokens.repository';

/** Prefix of every token we issue, so a leaked one is recognisable by secret scanners. */
export const TOKEN_PREFIX = 'spk_';

export type { Principal };

/** SHA-256 hex of a token: tokens carry 192 bits of randomness, so a fast hash is enough. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A new random token. */
export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(24).toString('base64url');
}

export function toTokenResponse(entity: TokenRow, createdBy: Person | null, clearToken?: string): TokenResponse {
  return {
    id: entity.id,
    name: entity.name,
    scope: entity.scope,
    environments: entity.environments,
    createdAt: entity.createdAt.toISOString(),
    lastUsedAt: entity.lastUsedAt?.toISOString() ?? null,
    revokedAt: entity.revokedAt?.toISOString() ?? null,
    expiresAt: entity.expiresAt?.toISOString() ?? null,
    createdBy: createdBy === null ? null : { id: createdBy.id, name: createdBy.name, email: createdBy.email },
    ...(clearToken === undefined ? {} : { token: clearToken }),
  };
}

/** The longest a token may be issued for. */
export const MAX_TOKEN_LIFETIME_DAYS = 3650;

/** A requested expiry as a date. @throws DomainError BadInput when it is not in the future or too far ahead. */
function expiryOf(text: string): Date {
  const expiresAt = new Date(text);
  const now = Date.now();
  if (Number.isNaN(expiresAt.getTime()))
    throw new DomainError(ErrorCode.BadInput, 'expiresAt must be an ISO 8601 date and time');
  if (expiresAt.getTime() <= now)
    throw new DomainError(ErrorCode.BadInput, `expiresAt must be in the future (it is ${expiresAt.toISOString()})`);
  if (expiresAt.getTime() > now + MAX_TOKEN_LIFETIME_DAYS * 86_400_000) {
    throw new DomainError(ErrorCode.BadInput, `expiresAt must be at most ${MAX_TOKEN_LIFETIME_DAYS} days ahead`);
  }
  return expiresAt;
}

@Injectable()
export class TokensService {
  /** When this process last touched each token's `last_used_at` (ms), so a busy token is written once a minute, not per request. */
  private readonly touched = new LruCache<string, number>(10_000);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly watch: TokenWatch,
    private readonly users: UsersService,
    private readonly audit: AuditService,
  ) {}

  /** Issues a token for a project, attributed to the person who asks; the clear token is in the answer only. */
  async create(
    projectId: string,
    input: { name: string; scope: TokenScope; environments?: EnvironmentKind[] | null; expiresAt?: string },
    by: Principal,
  ): Promise<TokenResponse> {
    if (input.environments && input.scope !== 'agent') {
      throw new DomainError(ErrorCode.BadInput, 'environments applies only to tokens with scope agent');
    }
    const expiresAt = input.expiresAt === undefined ? null : expiryOf(input.expiresAt);
    const clear = generateToken();
    const saved = await tokensRepository.insert(this.db, {
      projectId,
      name: input.name,
      scope: input.scope,
      environments: input.environments && input.environments.length > 0 ? [...new Set(input.environments)] : null,
      tokenHash: hashToken(clear),
      expiresAt,
      createdBy: by.kind === 'person' ? by.person.id : null,
    });
    await this.audit.record({
      projectId,
      actor: actorOf(by),
      action: 'token.created',
      target: saved.id,
      details: { name: saved.name, scope: saved.scope, expiresAt: saved.expiresAt?.toISOString() ?? null },
    });
    return toTokenResponse(saved, by.kind === 'person' ? by.person : null, clear);
  }

  /** Tokens of a project, never with their secret. */
  async list(projectId: string): Promise<TokenResponse[]> {
    const rows = await tokensRepository.ofProject(this.db, projectId);
    const people = new Map(
      (await this.users.byIds(rows.flatMap((row) => (row.createdBy === null ? [] : [row.createdBy])))).map((p) => [
        p.id,
        p,
      ]),
    );
    return rows.map((row) => toTokenResponse(row, row.createdBy === null ? null : (people.get(row.createdBy) ?? null)));
  }

  /** Revokes a token of a project; its open connections on this replica close now, on others within the check interval. */
  async revoke(projectId: string, tokenId: string, by: Principal): Promise<void> {
    if (!(await tokensRepository.revoke(this.db, projectId, tokenId, new Date())))
      throw new DomainError(ErrorCode.BadInput, `tokenId ${tokenId} is not an active token of this project`);
    await this.audit.record({ projectId, actor: actorOf(by), action: 'token.revoked', target: tokenId });
    await this.watch.checkNow();
  }

  /**
   * The principal behind a clear token.
   * @throws DomainError Unauthenticated when the token is unknown or revoked.
   */
  async authenticate(clear: string | null): Promise<TokenPrincipal> {
    if (clear === null || clear === '')
      throw new DomainError(ErrorCode.Unauthenticated, 'missing bearer token (Authorization: Bearer <token>)');
    const entity = await tokensRepository.byHash(this.db, hashToken(clear));
    if (!entity || entity.revokedAt !== null)
      throw new DomainError(ErrorCode.Unauthenticated, 'unknown or revoked token');
    if (entity.expiresAt !== null && entity.expiresAt.getTime() <= Date.now()) {
      throw new DomainError(
        ErrorCode.Unauthenticated,
        `token ${entity.name} expired at ${entity.expiresAt.toISOString()}`,
      );
    }
    // Touch at most once a minute so reads stay reads.
    const now = Date.now();
    if (now - (this.touched.get(entity.id) ?? 0) > 60_000) {
      this.touched.set(entity.id, now);
      void tokensRepository.touch(this.db, entity.id).catch(() => undefined);
    }
    return {
      kind: 'token',
      tokenId: entity.id,
      name: entity.name,
      scope: entity.scope,
      projectId: entity.projectId,
      environments: entity.environments,
    };
  }

  /**
   * Makes sure a bootstrap admin token exists. A configured token is registered (by hash); without
   * one, a token is generated only when no bootstrap token exists yet.
   * @returns the clear token when it is known to this process, and whether it was just generated.
   */
  async ensureAdminToken(configured: string | null): Promise<{ token: string | null; generated: boolean }> {
    return this.db.transaction(async (manager) => {
      // Replicas may start together: serialise the check-then-insert.
      await tokensRepository.lockAdminToken(manager);
      const admin = { projectId: null, name: 'admin', scope: 'admin', environments: null } as const;
      if (configured !== null) {
        const hash = hashToken(configured);
        if ((await tokensRepository.byHash(manager, hash)) === null)
          await tokensRepository.insert(manager, { ...admin, tokenHash: hash });
        return { token: configured, generated: false };
      }
      if (await tokensRepository.hasActiveAdminToken(manager)) return { token: null, generated: false };
      const clear = generateToken();
      await tokensRepository.insert(manager, { ...admin, tokenHash: hashToken(clear) });
      return { token: clear, generated: true };
    });
  }

  /** Whether a clear token is an active token (used to trust the admin-token file). */
  isActive(clear: string): Promise<boolean> {
    return tokensRepository.isActive(this.db, hashToken(clear));
  }
}
