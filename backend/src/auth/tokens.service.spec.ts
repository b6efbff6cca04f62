import type { Repository } from 'typeorm';
import { DomainError, ErrorCode } from '../common/errors';
import type { TokenEntity } from './token.entity';
import type { TokenWatch } from './token-watch';
import { hashToken, TOKEN_PREFIX, TokensService } from './tokens.service';
import type { AuditService } from '../audit/audit.service';
import type { TokenPrincipal } from '../common/principal';
import type { UsersService } from '../users/users.service';

/** The caller making tokens in these tests: the bootstrap admin token. */
const ADMIN: TokenPrincipal = {
  kind: 'token',
  tokenId: 'admin-token',
  name: 'admin',
  scope: 'admin',
  projectId: null,
  environments: null,
};

/** A repository double holding rows in memory: only what TokensService calls. */
function fakeRepository(rows: TokenEntity[] = []): Repository<TokenEntity> {
  const execute = jest.fn().mockResolvedValue({ affected: 1 });
  const builder = { update: () => builder, set: () => builder, where: () => builder, execute };
  return {
    create: (partial: Partial<TokenEntity>) => ({ ...partial }) as TokenEntity,
    save: jest.fn(async (entity: TokenEntity) => {
      const saved = {
        ...entity,
        id: `id-${rows.length + 1}`,
        createdAt: new Date('2026-01-01T00:00:00Z'),
        lastUsedAt: null,
        revokedAt: null,
        expiresAt: entity.expiresAt ?? null,
      };
      rows.push(saved);
      return saved;
    }),
    findOneByOrFail: jest.fn(async ({ id }: { id: string }) => rows.find((row) => row.id === id) as TokenEntity),
    findOneBy: jest.fn(
      async ({ tokenHash }: { tokenHash: string }) => rows.find((row) => row.tokenHash === tokenHash) ?? null,
    ),
    createQueryBuilder: () => builder,
  } as unknown as Repository<TokenEntity>;
}

/** A service over in-memory rows; the watch of open connections is a double (tested with real sockets in backend/test/tokens.test.ts). */
function serviceOver(rows: TokenEntity[] = []): TokensService {
  return new TokensService(
    fakeRepository(rows),
    { checkNow: jest.fn().mockResolvedValue(undefined) } as unknown as TokenWatch,
    { byIds: jest.fn().mockResolvedValue([]) } as unknown as UsersService,
    { record: jest.fn().mockResolvedValue(undefined) } as unknown as AuditService,
  );
}

describe('TokensService', () => {
  it('issues a token shown once and stores only its hash', async () => {
    const rows: TokenEntity[] = [];
    const service = serviceOver(rows);
    const created = await service.create(
      'project-1',
      { name: 'ci agent', scope: 'agent', environments: ['ci', 'ci'] },
      ADMIN,
    );
    expect(created.token?.startsWith(TOKEN_PREFIX)).toBe(true);
    expect(rows[0]?.tokenHash).toBe(hashToken(created.token as string));
    expect(JSON.stringify(rows)).not.toContain(created.token);
    expect(created).toMatchObject({ name: 'ci agent', scope: 'agent', environments: ['ci'] });
  });

  it('refuses environments on a token that does not stream', async () => {
    const service = serviceOver();
    await expect(
      service.create('p', { name: 'reader', scope: 'read', environments: ['ci'] }, ADMIN),
    ).rejects.toMatchObject({
      code: ErrorCode.BadInput,
    });
  });

  it('authenticates by hash and rejects missing, unknown and revoked tokens', async () => {
    const rows: TokenEntity[] = [];
    const service = serviceOver(rows);
    const { token } = await service.create('p', { name: 'w', scope: 'write' }, ADMIN);
    await expect(service.authenticate(token as string)).resolves.toMatchObject({
      name: 'w',
      scope: 'write',
      projectId: 'p',
    });
    await expect(service.authenticate(null)).rejects.toEqual(
      new DomainError(ErrorCode.Unauthenticated, 'missing bearer token (Authorization: Bearer <token>)'),
    );
    await expect(service.authenticate('spk_other')).rejects.toMatchObject({ code: ErrorCode.Unauthenticated });
    (rows[0] as TokenEntity).revokedAt = new Date();
    await expect(service.authenticate(token as string)).rejects.toMatchObject({ code: ErrorCode.Unauthenticated });
  });

  it('issues expiring tokens and refuses them once expired, naming when', async () => {
    const rows: TokenEntity[] = [];
    const service = serviceOver(rows);
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const created = await service.create('p', { name: 'ci', scope: 'agent', expiresAt }, ADMIN);
    expect(created.expiresAt).toBe(expiresAt);
    await expect(service.authenticate(created.token as string)).resolves.toMatchObject({ name: 'ci' });
    (rows[0] as TokenEntity).expiresAt = new Date('2026-01-02T00:00:00Z');
    await expect(service.authenticate(created.token as string)).rejects.toEqual(
      new DomainError(ErrorCode.Unauthenticated, 'token ci expired at 2026-01-02T00:00:00.000Z'),
    );
  });

  it('refuses an expiry in the past or more than ten years ahead', async () => {
    const service = serviceOver();
    await expect(
      service.create('p', { name: 'x', scope: 'read', expiresAt: '2020-01-01T00:00:00Z' }, ADMIN),
    ).rejects.toMatchObject({
      code: ErrorCode.BadInput,
      message: 'expiresAt must be in the future (it is 2020-01-01T00:00:00.000Z)',
    });
    await expect(
      service.create('p', { name: 'x', scope: 'read', expiresAt: '2999-01-01T00:00:00Z' }, ADMIN),
    ).rejects.toMatchObject({
      code: ErrorCode.BadInput,
      message: 'expiresAt must be at most 3650 days ahead',
    });
  });
});
