import type { DataSource } from 'typeorm';
import { ensurePostgresVersion } from './migrate';

/** A data source answering only the version query. */
const serverOf = (num: number, text: string): DataSource =>
  ({ query: jest.fn().mockResolvedValue([{ num, text }]) }) as unknown as DataSource;

describe('ensurePostgresVersion', () => {
  it('refuses a server older than 15, naming its version and the minimum', async () => {
    await expect(ensurePostgresVersion(serverOf(140019, '14.19'))).rejects.toThrow(
      'PostgreSQL 14.19 is too old: Spectator needs PostgreSQL 15 or later',
    );
    await expect(ensurePostgresVersion(serverOf(120017, '12.17'))).rejects.toThrow('PostgreSQL 12.17 is too old');
  });

  it('accepts 15 and later', async () => {
    await expect(ensurePostgresVersion(serverOf(150000, '15.0'))).resolves.toBeUndefined();
    await expect(ensurePostgresVersion(serverOf(180004, '18.4'))).resolves.toBeUndefined();
  });
});
