import { stat, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../src/config/config';
import { DatabaseUnreachable } from '../src/database/data-source';
import { startBackend } from '../src/backend';
import { apiCall, createTestDatabase, type TestDatabase } from './support';

let database: TestDatabase;
let dataDir: string;
beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'spectator-bootstrap-'));
});
afterAll(async () => {
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('bootstrap admin token', () => {
  it('is generated at the first start, written to a file only its owner can read, and reused by the next start', async () => {
    const options = { port: 0, databaseUrl: database.url, dataDir, logLevel: 'silent', dashboardDir: dataDir };
    const writes: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    let first;
    try {
      first = await startBackend(options);
    } finally {
      write.mockRestore();
    }
    const file = path.join(dataDir, 'admin-token');
    expect(first.adminToken).toMatch(/^spk_/);
    expect((await readFile(file, 'utf8')).trim()).toBe(first.adminToken);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(writes.join('')).toContain(first.adminToken);
    expect((await apiCall(first.url, first.adminToken, 'GET', '/projects')).status).toBe(200);
    await first.close();

    const second = await startBackend(options);
    try {
      expect(second.adminToken).toBe(first.adminToken);
    } finally {
      await second.close();
    }
  });

  it('names the database it cannot reach and the setting it came from, without the password', async () => {
    const failure = startBackend({ databaseUrl: 'postgres://spectator:s3cret-pw@127.0.0.1:1/nowhere' });
    await expect(failure).rejects.toThrow(DatabaseUnreachable);
    await expect(failure).rejects.toThrow(
      /^could not connect to PostgreSQL at postgres:\/\/spectator:\*\*\*@127\.0\.0\.1:1\/nowhere \(DATABASE_URL\): connect ECONNREFUSED 127\.0\.0\.1:1$/,
    );
  });

  it('fails fast naming the bad variable', async () => {
    const saved = process.env.SPECTATOR_MAX_MESSAGE_BYTES;
    process.env.SPECTATOR_MAX_MESSAGE_BYTES = 'lots';
    try {
      await expect(startBackend({ databaseUrl: database.url })).rejects.toThrow(ConfigError);
      await expect(startBackend({ databaseUrl: database.url })).rejects.toThrow(
        /SPECTATOR_MAX_MESSAGE_BYTES must be an integer/,
      );
    } finally {
      if (saved === undefined) delete process.env.SPECTATOR_MAX_MESSAGE_BYTES;
      else process.env.SPECTATOR_MAX_MESSAGE_BYTES = saved;
    }
  });
});
