import type { DataSource } from 'typeorm';
import { DomainError, ErrorCode } from '../common/errors';
import type { TokenWatch } from './token-watch';
import { tokensRepository, type TokenRow } from './tokens.repository';
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

/**
 * A service whose tokens are rows in memory: the repository's statements these tests reach are
 * replaced (restored after each test), and its database refuses any other.
 */
function serviceOver(rows: TokenRow[] = []): TokensService {
  jest.spyOn(tokensRepository, 'insert').mockImplementation(async (_db, token) => {
    const row: TokenRow = {
      ...token,
      id: `id-${rows.length + 1}`,
      createdAt: new Date('2026-01-01T00:00:00Z'),
      lastUsedAt: null,
      revokedAt: null,
      createdBy: token.createdBy ?? null,
      expiresAt: token.expiresAt ?? null,
    };
    rows.push(row);
    return row;
  });
  jest
    .spyOn(tokensRepository, 'byHash')
    .mockImplementation(async (_db, tokenHash) => rows.find((row) => row.tokenHash === tokenHash) ?? null);
  jest.spyOn(tokensRepository, 'touch').mockResolvedValue(undefined);
  const db = { query: () => Promise.reject(new Error('no database in this spec')) } as unknown as DataSource;
  // The watch of open connections is a double (tested with real sockets in backend/test/tokens.test.ts).
  return new TokensService(
    db,
    { checkNow: jest.fn().mockResolvedValue(undefined) } as unknown as TokenWatch,
    { byIds: jest.fn().mockResolvedValue([]) } as unknown as UsersService,
    { record: jest.fn().mockResolvedValue(undefined) } as unknown as AuditService,
  );
}

afterEach(() => jest.restoreAllMocks());

describe('TokensService', () => {
  it('issues a token shown once and stores only its hash', async () => {
    const rows: TokenRow[] = [];
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
    const rows: TokenRow[] = [];
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
    (rows[0] as TokenRow).revokedAt = new Date();
    await expect(service.authenticate(token as string)).rejects.toMatchObject({ code: ErrorCode.Unauthenticated });
  });

  it('issues expiring tokens and refuses them once expired, naming when', async () => {
    const rows: TokenRow[] = [];
    const service = serviceOver(rows);
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const created = await service.create('p', { name: 'ci', scope: 'agent', expiresAt }, ADMIN);
    expect(created.expiresAt).toBe(expiresAt);
    await expect(service.authenticate(created.token as string)).resolves.toMatchObject({ name: 'ci' });
    (rows[0] as TokenRow).expiresAt = new Date('2026-01-02T00:00:00Z');
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
