/**
 * The proposals repository's queries against real PostgreSQL, where the HTTP suites do not reach
 * them one by one: a status moves only from the status named, never back; a step is recorded once;
 * steps list in lifecycle order; the two orders of planned endpoints; lookups stay in their project.
 */
import type { EntityManager } from 'typeorm';
import { createDataSource } from '../src/database/data-source';
import { migrateUp } from '../src/database/migrate';
import { ProposalsRepository, type StoredEndpoint } from '../src/proposals/proposals.repository';
import { VersionStore } from '../src/versions/version-store';
import type { EndpointRef } from '../src/versions/versions.repository';
import { writeNextVersion } from '../src/versions/version-writer';
import { createTestDatabase, type TestDatabase } from './support';

let database: TestDatabase;
let ds: ReturnType<typeof createDataSource>;
let repository: ProposalsRepository;
let projectId: string;
let otherProjectId: string;

const NEW = { title: 't', description: '', sourceCaptureId: null, createdBy: 'ann', author: null };

async function project(slug: string): Promise<string> {
  const [row] = (await ds.query(`INSERT INTO projects (slug, name) VALUES ($1, $1) RETURNING id`, [slug])) as Array<{
    id: string;
  }>;
  return (row as { id: string }).id;
}

function inTransaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
  return ds.transaction(work);
}

beforeAll(async () => {
  database = await createTestDatabase();
  ds = createDataSource(database.url, { poolSize: 2 });
  await ds.initialize();
  await migrateUp(ds);
  repository = new ProposalsRepository(ds);
  projectId = await project('one');
  otherProjectId = await project('two');
});
afterAll(async () => {
  await ds.destroy();
  await database.drop();
});

describe('ProposalsRepository', () => {
  it('approves only from the status named, once', async () => {
    const id = await inTransaction((m) => repository.insert(projectId, NEW, 'Open', null, m));
    expect(await repository.byId(projectId, id)).toMatchObject({ status: 'Open', createdBy: 'ann', author: null });
    expect(await inTransaction((m) => repository.approve(id, 'Open', 'Approved', 'bob', m))).toBe(true);
    expect(await inTransaction((m) => repository.approve(id, 'Open', 'Approved', 'bob', m))).toBe(false);
    const [row] = (await ds.query('SELECT status, approved_by AS "approvedBy" FROM proposals WHERE id = $1', [
      id,
    ])) as Array<{ status: string; approvedBy: string }>;
    expect(row).toEqual({ status: 'Approved', approvedBy: 'bob' });
  });

  it('records an approval at the time given, or now; a second one of a step fails', async () => {
    const at = new Date('2026-01-02T03:04:05.000Z');
    const id = await inTransaction((m) => repository.insert(projectId, NEW, 'Approved', { by: 'bob', at }, m));
    await inTransaction((m) => repository.insertStep(id, 'Approved', 'bob', at, m));
    expect(await inTransaction((m) => repository.withStep(id, 'Approved', m))).toEqual({
      title: 't',
      status: 'Approved',
      actor: 'bob',
      at,
    });
    await expect(inTransaction((m) => repository.insertStep(id, 'Approved', 'bob', null, m))).rejects.toThrow(
      /proposal_steps_once/,
    );
    const open = await inTransaction((m) => repository.insert(projectId, NEW, 'Open', null, m));
    await inTransaction((m) => repository.insertStep(open, 'Approved', 'bob', null, m));
    const step = await inTransaction((m) => repository.withStep(open, 'Approved', m));
    // Null is the transaction's now(), long after `at`.
    expect(step?.at.getTime()).toBeGreaterThan(at.getTime());
    expect(await inTransaction((m) => repository.withStep(open, 'Implemented', m))).toBeNull();
  });

  it('records an evidence step once; the status is the furthest step and never moves back', async () => {
    const at = new Date();
    const id = await inTransaction((m) => repository.insert(projectId, NEW, 'Approved', { by: 'bob', at }, m));
    const evidence = { pullRequest: '7', build: 'b1', commit: 'c1' };
    const production = await inTransaction((m) =>
      repository.insertEvidenceStep(id, 'Appeared in Production', evidence, m),
    );
    expect(production).toBeInstanceOf(Date);
    expect(
      await inTransaction((m) => repository.insertEvidenceStep(id, 'Appeared in Production', evidence, m)),
    ).toBeNull();
    expect(await inTransaction((m) => repository.advanceStatus(id, 'Appeared in Production', m))).toEqual({
      title: 't',
      status: 'Appeared in Production',
    });
    await inTransaction((m) => repository.insertEvidenceStep(id, 'Implemented', evidence, m));
    expect(await inTransaction((m) => repository.advanceStatus(id, 'Implemented', m))).toEqual({
      title: 't',
      status: 'Appeared in Production',
    });
    await inTransaction((m) => repository.insertStep(id, 'Approved', 'bob', at, m));
    expect((await repository.steps(id)).map((s) => [s.step, s.pullRequest])).toEqual([
      ['Approved', null],
      ['Implemented', '7'],
      ['Appeared in Production', '7'],
    ]);
    expect(
      await inTransaction((m) => repository.advanceStatus('00000000-0000-4000-8000-000000000000', 'Implemented', m)),
    ).toBeNull();
  });

  it('lists planned endpoints in the order given, or in lock order (path, method)', async () => {
    const endpoint = (method: string, path: string): StoredEndpoint => ({
      method,
      path,
      description: null,
      mode: 'replace',
      request: null,
      responses: [{ status: 200, contentType: null, shape: null }],
    });
    const given = [endpoint('POST', '/b'), endpoint('GET', '/b'), endpoint('GET', '/a')];
    const id = await inTransaction(async (m) => {
      const made = await repository.insert(projectId, NEW, 'Open', null, m);
      await repository.insertEndpoints(made, given, m);
      return made;
    });
    expect((await repository.endpoints(id)).map((e) => `${e.method} ${e.path}`)).toEqual([
      'POST /b',
      'GET /b',
      'GET /a',
    ]);
    expect(
      (await inTransaction((m) => repository.endpointsInLockOrder(id, m))).map((e) => `${e.method} ${e.path}`),
    ).toEqual(['GET /a', 'GET /b', 'POST /b']);
    expect((await repository.endpoints(id))[0]).toEqual({ ...given[0], parameters: null });
  });

  it('names the proposals still waiting for a step: of its project, past the status named, without that step', async () => {
    const at = new Date();
    const approved = () => inTransaction((m) => repository.insert(projectId, NEW, 'Approved', { by: 'bob', at }, m));
    const waiting = await approved();
    const done = await approved();
    await inTransaction((m) =>
      repository.insertEvidenceStep(done, 'Implemented', { pullRequest: '1', build: null, commit: null }, m),
    );
    const open = await inTransaction((m) => repository.insert(projectId, NEW, 'Open', null, m));
    const three = await project('three');
    const elsewhere = await inTransaction((m) => repository.insert(three, NEW, 'Approved', { by: 'bob', at }, m));
    const awaiting = await inTransaction((m) =>
      repository.awaitingStep(projectId, [waiting, done, open, elsewhere], 'Implemented', 'Open', m),
    );
    expect(awaiting).toEqual([waiting]);
    expect(await inTransaction((m) => repository.awaitingStep(projectId, [], 'Implemented', 'Open', m))).toEqual([]);
  });

  it('finds and lists proposals of their own project only, newest first; summarizes them by id', async () => {
    const first = await inTransaction((m) => repository.insert(otherProjectId, NEW, 'Open', null, m));
    const second = await inTransaction((m) => repository.insert(otherProjectId, NEW, 'Open', null, m));
    expect(await repository.byId(projectId, first)).toBeNull();
    expect((await repository.page(otherProjectId, 10)).map((p) => p.id)).toEqual([second, first]);
    expect((await repository.page(otherProjectId, 1)).map((p) => p.id)).toEqual([second]);
    const summaries = await repository.summaries([first, '00000000-0000-4000-8000-000000000000']);
    expect(summaries).toEqual([
      { id: first, title: 't', status: 'Open', createdBy: 'ann', approvedBy: null, approvedAt: null },
    ]);
  });
});

describe('VersionStore, as proposals read it', () => {
  it('gives the versions a proposal made with the one before, and current versions by method and path', async () => {
    const shapes = { request: null, responses: [{ status: 200, contentType: null, shape: null }] };
    const write = (proposalId: string): Promise<unknown> =>
      inTransaction((m) =>
        writeNextVersion(m, {
          projectId,
          method: 'GET',
          path: '/v',
          description: null,
          shapes,
          mode: 'replace',
          proposalId,
          keepUnchanged: false,
        }),
      );
    const at = new Date();
    const first = await inTransaction((m) => repository.insert(projectId, NEW, 'Approved', { by: 'bob', at }, m));
    const second = await inTransaction((m) => repository.insert(projectId, NEW, 'Approved', { by: 'bob', at }, m));
    await write(first);
    await write(second);
    const versions = new VersionStore(ds);
    expect(await versions.madeBy(first)).toEqual([
      expect.objectContaining({ method: 'GET', path: '/v', major: 1, minor: 0, fromMajor: null, fromMinor: null }),
    ]);
    expect(await versions.madeBy(second)).toEqual([
      expect.objectContaining({ method: 'GET', path: '/v', major: 1, minor: 1, fromMajor: 1, fromMinor: 0 }),
    ]);
    const current = await versions.withCurrent(projectId, [
      { method: 'GET', path: '/v' },
      { method: 'GET', path: '/none' },
    ]);
    expect(current).toEqual([
      {
        method: 'GET',
        path: '/v',
        endpointId: expect.any(String),
        current: expect.objectContaining({ major: 1, minor: 1, responses: shapes.responses }),
      },
    ]);
    expect(await versions.withCurrent(otherProjectId, [{ method: 'GET', path: '/v' }])).toEqual([]);
  });

  it('gives evidence and the lifecycle the documented endpoints, their versions and the proposals behind them', async () => {
    const shapes = { request: null, responses: [{ status: 200, contentType: null, shape: null }] };
    const at = new Date();
    const proposal = () => inTransaction((m) => repository.insert(projectId, NEW, 'Approved', { by: 'bob', at }, m));
    const write = (proposalId: string, method: string, path: string, project = projectId): Promise<unknown> =>
      inTransaction((m) =>
        writeNextVersion(m, {
          projectId: project,
          method,
          path,
          description: null,
          shapes,
          mode: 'replace',
          proposalId,
          keepUnchanged: false,
        }),
      );
    const first = await proposal();
    const second = await proposal();
    await write(first, 'POST', '/e/{id}');
    await write(first, 'GET', '/e/{id}');
    await write(second, 'GET', '/e/{id}');
    await write(second, 'GET', '/e');
    const four = await project('four');
    const other = await inTransaction((m) => repository.insert(four, NEW, 'Approved', { by: 'bob', at }, m));
    await write(other, 'GET', '/e', four);
    const versions = new VersionStore(ds);

    const documented = await versions.documented(projectId);
    const key = (e: { method: string; path: string }): string => `${e.method} ${e.path}`;
    // The matrix's columns: path, then method; /v is the earlier test's.
    expect(documented.map(key)).toEqual(['GET /e', 'GET /e/{id}', 'POST /e/{id}', 'GET /v']);
    const [getE, getOne, postOne] = documented as [EndpointRef, EndpointRef, EndpointRef];
    const byId = (a: EndpointRef, b: EndpointRef): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    expect(
      await versions.documentedAmong(projectId, [
        { method: 'GET', path: '/e/{id}' },
        { method: 'POST', path: '/e/{id}' },
        { method: 'DELETE', path: '/e/{id}' },
      ]),
    ).toEqual([getOne, postOne].sort(byId));
    expect(await versions.documentedAt(projectId, '/e/{id}')).toEqual([getOne, postOne].sort(byId));
    expect(await versions.endpointsByIds(four, [getE.id, getOne.id])).toEqual([]);
    expect(await versions.endpointsByIds(projectId, [getOne.id, getE.id])).toEqual([getE, getOne].sort(byId));
    expect(await versions.endpointIdOf(projectId, 'POST', '/e/{id}')).toBe(postOne.id);
    expect(await versions.endpointIdOf(four, 'GET', '/e/{id}')).toBeNull();
    expect((await versions.documentedCurrent(projectId)).map(key)).toEqual(documented.map(key));
    expect(await versions.documentedCurrent(projectId, [{ method: 'POST', path: '/e/{id}' }])).toEqual([
      { endpointId: postOne.id, method: 'POST', path: '/e/{id}', version: '1.0', removed: false },
    ]);
    // GET /e/{id} has two versions; the others their first.
    expect((await versions.firstDocumented([getE.id, getOne.id, postOne.id])).sort()).toEqual(
      [getE.id, postOne.id].sort(),
    );
    expect((await versions.versionsOf([getOne.id])).map((v) => [v.endpointId, `${v.major}.${v.minor}`]).sort()).toEqual(
      [
        [getOne.id, '1.0'],
        [getOne.id, '1.1'],
      ],
    );
    expect((await versions.proposalsVersioning([postOne.id])).sort()).toEqual([first]);
    expect((await versions.proposalsVersioning([getOne.id])).sort()).toEqual([first, second].sort());
    expect(await versions.proposalsVersioning([getE.id])).toEqual([second]);
    const made = await versions.madeByProposals([second]);
    expect(made.map((v) => [v.proposalId, v.endpointId, `${v.major}.${v.minor}`]).sort()).toEqual(
      [
        [second, getOne.id, '1.1'],
        [second, getE.id, '1.0'],
      ].sort(),
    );
  });

  it('lists the removals a row first seen after their approval may move, until they have the step', async () => {
    const removes = (title: string) => ({ ...NEW, title, removes: true });
    const approved = new Date('2026-03-01T00:00:00.000Z');
    const removal = await inTransaction((m) =>
      repository.insert(projectId, removes('gone'), 'Approved', { by: 'bob', at: approved }, m),
    );
    const gone: StoredEndpoint = {
      method: 'GET',
      path: '/gone',
      description: null,
      mode: 'remove',
      request: null,
      responses: [],
    };
    await inTransaction((m) => repository.insertEndpoints(removal, [gone, { ...gone, method: 'DELETE' }], m));
    // Not removals, or not approved: never listed.
    await inTransaction((m) => repository.insert(projectId, NEW, 'Approved', { by: 'bob', at: approved }, m));
    await inTransaction((m) => repository.insert(projectId, removes('open'), 'Open', null, m));
    const awaiting = (before: Date, project = projectId) =>
      inTransaction((m) => repository.removalsAwaiting(project, 'Appeared in Staging', before, 'Open', m));
    const later = new Date('2026-03-02T00:00:00.000Z');
    expect(await awaiting(later)).toEqual([
      {
        id: removal,
        endpoints: [
          { method: 'GET', path: '/gone' },
          { method: 'DELETE', path: '/gone' },
        ],
      },
    ]);
    // A row first seen before the approval, or in another project: none.
    expect(await awaiting(new Date('2026-02-28T00:00:00.000Z'))).toEqual([]);
    expect(await awaiting(later, otherProjectId)).toEqual([]);
    expect(await repository.removedEndpoints(removal)).toEqual([
      { method: 'GET', path: '/gone' },
      { method: 'DELETE', path: '/gone' },
    ]);
    expect(await repository.byId(projectId, removal)).toMatchObject({ removes: true, approvedAt: approved });
    await inTransaction((m) =>
      repository.insertEvidenceStep(removal, 'Appeared in Staging', { pullRequest: null, build: 's', commit: null }, m),
    );
    expect(await awaiting(later)).toEqual([]);
  });
});
