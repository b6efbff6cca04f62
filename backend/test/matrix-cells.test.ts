/**
 * The version matrix sends each row's stored cells text (views/matrix-texts.ts): it must stay equal
 * to the cells `evidence_cells` holds after batches, after an endpoint is documented for the first
 * time (a column is inserted) and after a version is made, and a page must still be right for a
 * row whose text is missing or was built for fewer columns.
 */
import type { ProposalResponse, TokenResponse, VersionCell, VersionMatrixResponse } from '@spectator/shared';
import pg from 'pg';
import { createDataSource, MIGRATIONS } from '../src/database/data-source';
import { migrateDown, migrateUp } from '../src/database/migrate';
import type { DataSource } from 'typeorm';
import { matrixTexts } from '../src/views/matrix-texts';
import { startTestBackend, type TestBackend } from './support';
import { batchMessage, connectTestAgent, helloMessage, type TestExchange } from './support/agent-client';
import { report, untilFolded } from './support/evidence-helpers';

let backend: TestBackend;
let db: pg.Client;
let ds: DataSource;
let agentToken: string;

/** An object schema; a type ending in `?` is an optional property. */
const schemaOf = (properties: Record<string, string>): unknown => ({
  type: 'object',
  properties: Object.fromEntries(
    Object.entries(properties).map(([name, type]) => [name, { type: type.replace('?', '') }]),
  ),
  required: Object.keys(properties).filter((name) => !properties[name]?.endsWith('?')),
});
const ok = (path: string, response: unknown): TestExchange => ({ method: 'GET', path, status: 200, response });

async function document(path: string, properties: Record<string, string>): Promise<void> {
  const created = await backend.api<ProposalResponse>('POST', '/projects/cells/proposals', {
    title: `document ${path}`,
    endpoints: [
      {
        method: 'GET',
        path,
        responses: [{ status: 200, contentType: 'application/json', schema: schemaOf(properties) }],
      },
    ],
  });
  expect(created.status).toBe(201);
  expect((await backend.api('POST', `/projects/cells/proposals/${created.body.id}/approve`)).status).toBe(200);
}

async function matrix(query = '?limit=100'): Promise<VersionMatrixResponse> {
  const { status, body } = await backend.api<VersionMatrixResponse>('GET', `/projects/cells/versions${query}`);
  expect(status).toBe(200);
  return body;
}

/** The cells of the rows named `names` (kind + name), computed from evidence_cells and the documented endpoints. */
async function cellsFromEvidence(rows: ReadonlyArray<{ kind: string; name: string }>): Promise<VersionCell[][]> {
  const columns = (
    await db.query<{ id: string }>(
      `SELECT id FROM endpoints WHERE current_version_id IS NOT NULL ORDER BY path, method`,
    )
  ).rows;
  const stored = (
    await db.query<{ kind: string; name: string; endpoint_id: string; version: string; drift: boolean }>(
      `SELECT r.kind, r.name, c.endpoint_id, c.version, c.drift FROM evidence_cells c JOIN environment_rows r ON r.id = c.row_id`,
    )
  ).rows;
  return rows.map((row) =>
    columns.map(({ id }) => {
      const cell = stored.find((c) => c.kind === row.kind && c.name === row.name && c.endpoint_id === id);
      if (cell === undefined) return { version: 'N/A' };
      return cell.drift ? { version: cell.version, drift: true } : { version: cell.version };
    }),
  );
}

/**
 * Every stored text parses to the cells evidence_cells holds, for the current columns, and is the
 * very text a rebuild writes (folds patch only their changed cells into it).
 */
async function expectStoredTextsMatchEvidence(): Promise<void> {
  const rows = (
    await db.query<{
      id: string;
      project_id: string;
      kind: string;
      name: string;
      cells_json: string;
      cells_columns: number;
    }>(
      `SELECT id, project_id, kind, name, cells_json, cells_columns FROM environment_rows WHERE cells_json IS NOT NULL ORDER BY kind, name`,
    )
  ).rows;
  const expected = await cellsFromEvidence(rows);
  expect(rows.map((r) => JSON.parse(r.cells_json) as unknown)).toEqual(expected);
  expect(rows.map((r) => r.cells_columns)).toEqual(expected.map((cells) => cells.length));
  const built = new Map<string, string>();
  for (const projectId of new Set(rows.map((r) => r.project_id)))
    for (const [id, text] of await matrixTexts.build(
      ds,
      projectId,
      rows.filter((r) => r.project_id === projectId).map((r) => r.id),
    ))
      built.set(id, text);
  expect(rows.map((r) => r.cells_json)).toEqual(rows.map((r) => built.get(r.id)));
}

/** GET /versions equals the matrix computed from evidence_cells, and every stored text does too. */
async function expectMatrixMatchesEvidence(): Promise<VersionMatrixResponse> {
  const m = await matrix();
  const columns = (
    await db.query<{ id: string }>(
      `SELECT id FROM endpoints WHERE current_version_id IS NOT NULL ORDER BY path, method`,
    )
  ).rows;
  expect(m.endpoints.map((e) => e.id)).toEqual(columns.map((c) => c.id));
  expect(m.cells).toEqual(await cellsFromEvidence(m.rows));
  await expectStoredTextsMatchEvidence();
  return m;
}

/** `row name → "path: version"` with drift marked `~`, for readable expectations. */
function shown(m: VersionMatrixResponse): Record<string, string> {
  return Object.fromEntries(
    m.rows.map((row, r) => [
      row.name,
      m.endpoints.map((e, c) => `${e.path}:${m.cells[r]?.[c]?.drift ? '~' : ''}${m.cells[r]?.[c]?.version}`).join(' '),
    ]),
  );
}

beforeAll(async () => {
  backend = await startTestBackend();
  db = new pg.Client({ connectionString: backend.databaseUrl });
  await db.connect();
  ds = createDataSource(backend.databaseUrl, { poolSize: 1 });
  await ds.initialize();
  await backend.api('POST', '/projects', { slug: 'cells', name: 'Cells' });
  agentToken = (await backend.api<TokenResponse>('POST', '/projects/cells/tokens', { name: 'agents', scope: 'agent' }))
    .body.token as string;
});
afterAll(async () => {
  await ds.destroy();
  await db.end();
  await backend.close();
});

describe('the stored matrix texts', () => {
  it('follow batches, a first documented endpoint (a column inserted in the middle) and new versions', async () => {
    await document('/a', { id: 'number' });
    await document('/c', { id: 'number' });
    await report(backend.url, agentToken, { kind: 'ci', pullRequest: '1' }, [ok('/a', { id: 1 }), ok('/c', { id: 2 })]);
    await report(backend.url, agentToken, { kind: 'staging', build: 's-1' }, [
      ok('/a', { id: 1 }),
      ok('/b', { id: 'x' }),
    ]);
    await report(backend.url, agentToken, { kind: 'production', build: 'p-1' }, [ok('/c', { id: 2 })]);
    // Only undocumented traffic: a row without cells, hence without text.
    await report(backend.url, agentToken, { kind: 'production', build: 'p-0' }, [ok('/undocumented', {})]);
    expect(shown(await expectMatrixMatchesEvidence())).toEqual({
      'PR #1': '/a:1.0 /c:1.0',
      's-1': '/a:1.0 /c:N/A',
      'p-1': '/a:N/A /c:1.0',
      'p-0': '/a:N/A /c:N/A',
    });

    // A batch that changes a cell (drift), then one that changes nothing.
    await report(backend.url, agentToken, { kind: 'production', build: 'p-1' }, [ok('/c', { id: 2, extra: true })]);
    await report(backend.url, agentToken, { kind: 'production', build: 'p-1' }, [ok('/c', { id: 2 })]);
    expect(shown(await expectMatrixMatchesEvidence())['p-1']).toBe('/a:N/A /c:~1.0');

    // /b, seen by s-1 before it was documented, becomes the middle column of every row.
    await document('/b', { id: 'string' });
    expect(shown(await expectMatrixMatchesEvidence())).toEqual({
      'PR #1': '/a:1.0 /b:N/A /c:1.0',
      's-1': '/a:1.0 /b:1.0 /c:N/A',
      'p-1': '/a:N/A /b:N/A /c:~1.0',
      'p-0': '/a:N/A /b:N/A /c:N/A',
    });

    // A new version of /c the drifting traffic conforms to.
    await document('/c', { id: 'number', extra: 'boolean?' });
    const m = await expectMatrixMatchesEvidence();
    expect(shown(m)['p-1']).toBe('/a:N/A /b:N/A /c:1.1');
    expect(m.endpoints.map((e) => e.version)).toEqual(['1.0', '1.0', '1.1']);
  });

  it('stay right when agents of one build send overlapping batches at once (the row is locked after the evidence insert)', async () => {
    const agents = await Promise.all([0, 1, 2, 3].map(() => connectTestAgent(backend.url, agentToken)));
    try {
      const environment = { kind: 'staging' as const, build: 's-busy' };
      const captures = await Promise.all(
        agents.map(async (agent, a) => {
          const hello = helloMessage({ agentId: `busy-${a}`, environment });
          expect((await agent.request(hello)).type).toBe('welcome');
          return hello.capture.id;
        }),
      );
      // The same 30 exchanges per batch, in a different order per agent; every third drifts on /c.
      const exchanges = Array.from({ length: 30 }, (_, i): TestExchange =>
        i % 3 === 0
          ? ok('/c', { id: i, extra: true, [`f${i}`]: 1 })
          : ok(i % 2 ? '/a' : '/b', i % 2 ? { id: i } : { id: `${i}` }),
      );
      const acks = await Promise.all(
        agents.map(async (agent, a) => {
          const answers = [];
          for (let b = 0; b < 5; b++) {
            const ordered = a % 2 ? [...exchanges].reverse() : exchanges;
            answers.push((await agent.request(batchMessage(captures[a] as string, ordered), 20_000)).type);
          }
          return answers;
        }),
      );
      expect(acks.flat()).toEqual(Array(20).fill('ack'));
    } finally {
      await Promise.all(agents.map((agent) => agent.close()));
    }
    // Staging batches are acknowledged at commit: read once they are folded.
    await untilFolded(backend.databaseUrl);
    const counts = await db.query<{ n: string; total: string }>(
      `SELECT count(*) AS n, sum(o.count) AS total FROM evidence_observations o JOIN environment_rows r ON r.id = o.row_id WHERE r.name = 's-busy'`,
    );
    // /c bodies differ per i (10 distinct), /a and /b bodies collapse to one shape each.
    expect(counts.rows[0]).toEqual({ n: '12', total: String(4 * 5 * 30) });
    expect(shown(await expectMatrixMatchesEvidence())['s-busy']).toBe('/a:1.0 /b:1.0 /c:~1.1');
  });

  it('are read around when missing or built for fewer columns, and the page stays right', async () => {
    const before = await matrix();
    // As a row created while an endpoint was being documented would be: built for one column fewer.
    await db.query(
      `UPDATE environment_rows SET cells_json = '[{"version":"9.9"}]', cells_columns = cells_columns - 1 WHERE name = 'p-1'`,
    );
    await db.query(`UPDATE environment_rows SET cells_json = NULL, cells_columns = NULL WHERE name = 'p-0'`);
    expect(await matrix()).toEqual(before);
    // The next change of the row's cells rewrites its text.
    await report(backend.url, agentToken, { kind: 'production', build: 'p-1' }, [ok('/a', { id: 1 })]);
    expect(shown(await expectMatrixMatchesEvidence())['p-1']).toBe('/a:1.0 /b:N/A /c:1.1');
  });

  it('are sent as JSON text, pages included, and a bad cursor still answers the standard JSON error', async () => {
    const response = await fetch(`${backend.url}/api/v1/projects/cells/versions?kind=production&limit=1`, {
      headers: { authorization: `Bearer ${backend.adminToken}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const first = (await response.json()) as VersionMatrixResponse;
    expect(first.rows.map((r) => r.name)).toEqual(['p-0']);
    expect(first.cells).toEqual(await cellsFromEvidence(first.rows));
    const second = await matrix(`?kind=production&limit=1&cursor=${first.nextCursor}`);
    expect(second.rows.map((r) => r.name)).toEqual(['p-1']);
    expect(second.nextCursor).toBeNull();

    const bad = await fetch(
      `${backend.url}/api/v1/projects/cells/versions?cursor=00000000-0000-4000-8000-000000000000`,
      { headers: { authorization: `Bearer ${backend.adminToken}` } },
    );
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await bad.json()) as { message: string }).message).toMatch(
      /cursor 00000000-0000-4000-8000-000000000000 is not a row of this matrix/,
    );
    const tooMany = await backend.api<{ message: string }>('GET', '/projects/cells/versions?limit=101');
    expect(tooMany.status).toBe(400);
    expect(JSON.stringify(tooMany.body)).toMatch(/limit/);
  });

  it('gain several columns at once, spliced in where they belong, and a stale text is rebuilt meanwhile', async () => {
    await db.query(
      `UPDATE environment_rows SET cells_json = '[{"version":"9.9"}]', cells_columns = cells_columns - 1 WHERE name = 'PR #1'`,
    );
    const created = await backend.api<ProposalResponse>('POST', '/projects/cells/proposals', {
      title: 'two at once',
      endpoints: ['/0', '/bb'].map((path) => ({
        method: 'GET',
        path,
        responses: [{ status: 200, contentType: 'application/json', schema: schemaOf({ id: 'number' }) }],
      })),
    });
    expect((await backend.api('POST', `/projects/cells/proposals/${created.body.id}/approve`)).status).toBe(200);
    const m = await expectMatrixMatchesEvidence();
    expect(m.endpoints.map((e) => e.path)).toEqual(['/0', '/a', '/b', '/bb', '/c']);
    expect(shown(m)['PR #1']).toBe('/0:N/A /a:1.0 /b:N/A /bb:N/A /c:1.0');
    expect(shown(m)['p-1']).toBe('/0:N/A /a:1.0 /b:N/A /bb:N/A /c:1.1');
  });

  it('are backfilled from evidence_cells by the migration', async () => {
    const before = await matrix();
    const ds = createDataSource(backend.databaseUrl, { poolSize: 2 });
    await ds.initialize();
    try {
      const reverted: Array<string | null> = [];
      while (reverted.at(-1) !== 'MatrixCellsText1764100000000' && reverted.length < MIGRATIONS.length)
        reverted.push(await migrateDown(ds));
      expect(reverted.at(-1)).toBe('MatrixCellsText1764100000000');
      const columns = (
        await db.query<{ column_name: string }>(
          `SELECT column_name FROM information_schema.columns WHERE table_name = 'environment_rows' AND column_name LIKE 'cells%'`,
        )
      ).rows;
      expect(columns).toEqual([]);
      expect(await migrateUp(ds)).toEqual([...reverted].reverse());
    } finally {
      await ds.destroy();
    }
    await expectStoredTextsMatchEvidence();
    // Going down past RuntimeEvidence dropped the runtime evidence (runtime_buckets, runtime_cells); the cells are the same.
    const after = await matrix();
    expect(after.runtime.flat()).toEqual([]);
    expect({ ...after, runtime: null }).toEqual({ ...before, runtime: null });
  });
});
