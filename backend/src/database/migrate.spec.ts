import type { DataSource } from 'typeorm';
import { ensurePostgresVersion } from './migrate';

/** A data source answering only the version query. */
const serverOf = (num: number, text: string): DataSource =>
  ({ query: jest.fn().mockResolvedValue([{ num, text }]) }) as unknown as DataSource;

describe('ensurePostgresVersion', () => {
  it('refuses a server older than 13, naming its version', async () => {
    await expect(ensurePostgresVersion(serverOf(120017, '12.17'))).rejects.toThrow(
      'PostgreSQL 12.17 is too old: Spectator needs PostgreSQL 13 or later (xid8 snapshots)',
    );
  });

  it('accepts 13 and later', async () => {
    await expect(ensurePostgresVersion(serverOf(130000, '13.0'))).resolves.toBeUndefined();
    await expect(ensurePostgresVersion(serverOf(180004, '18.4'))).resolves.toBeUndefined();
  });
});
