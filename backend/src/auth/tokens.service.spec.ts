import type { Repository } from 'typeorm';
import { DomainError, ErrorCode } from '../common/errors';
import type { TokenEntity } from './token.entity';
import { hashToken, TOKEN_PREFIX, TokensService } from './tokens.service';

/** A repository double holding rows in memory: only what TokensService calls. */
function fakeRepository(rows: TokenEntity[] = []): Repository<TokenEntity> {
  const execute = jest.fn().mockResolvedValue({ affected: 1 });
  const builder = { update: () => builder, set: () => builder, where: () => builder, execute };
  return {
    create: (partial: Partial<TokenEntity>) => ({ ...partial }) as TokenEntity,
    save: jest.fn(async (entity: TokenEntity) => {
      const saved = { ...entity, id: `id-${rows.length + 1}`, createdAt: new Date('2026-01-01T00:00:00Z'), lastUsedAt: null, revokedAt: null };
      rows.push(saved);
      return saved;
    }),
    findOneByOrFail: jest.fn(async ({ id }: { id: string }) => rows.find((row) => row.id === id) as TokenEntity),
    findOneBy: jest.fn(async ({ tokenHash }: { tokenHash: string }) => rows.find((row) => row.tokenHash === tokenHash) ?? null),
    createQueryBuilder: () => builder,
  } as unknown as Repository<TokenEntity>;
}

describe('TokensService', () => {
  it('issues a token shown once and stores only its hash', async () => {
    const rows: TokenEntity[] = [];
    const service = new TokensService(fakeRepository(rows));
    const created = await service.create('project-1', { name: 'ci agent', scope: 'agent', environments: ['ci', 'ci'] });
    expect(created.token?.startsWith(TOKEN_PREFIX)).toBe(true);
    expect(rows[0]?.tokenHash).toBe(hashToken(created.token as string));
    expect(JSON.stringify(rows)).not.toContain(created.token);
    expect(created).toMatchObject({ name: 'ci agent', scope: 'agent', environments: ['ci'] });
  });

  it('refuses environments on a token that does not stream', async () => {
    const service = new TokensService(fakeRepository());
    await expect(service.create('p', { name: 'reader', scope: 'read', environments: ['ci'] })).rejects.toMatchObject({ code: ErrorCode.BadInput });
  });

  it('authenticates by hash and rejects missing, unknown and revoked tokens', async () => {
    const rows: TokenEntity[] = [];
    const service = new TokensService(fakeRepository(rows));
    const { token } = await service.create('p', { name: 'w', scope: 'write' });
    await expect(service.authenticate(token as string)).resolves.toMatchObject({ name: 'w', scope: 'write', projectId: 'p' });
    await expect(service.authenticate(null)).rejects.toEqual(new DomainError(ErrorCode.Unauthenticated, 'missing bearer token (Authorization: Bearer <token>)'));
    await expect(service.authenticate('spk_other')).rejects.toMatchObject({ code: ErrorCode.Unauthenticated });
    (rows[0] as TokenEntity).revokedAt = new Date();
    await expect(service.authenticate(token as string)).rejects.toMatchObject({ code: ErrorCode.Unauthenticated });
  });
});
