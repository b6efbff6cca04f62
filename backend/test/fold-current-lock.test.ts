/**
 * Folds of two production builds of one service during a rollout (issue 20): both rows reach "what
 * runs there now" of the same endpoints (one row per kind, scope and endpoint) and record the first
 * sightings of the same endpoints (one row per project, kind and endpoint). A fold writes both only
 * at its end, after the runtime minutes and consumer days, so a fold of the other build does not
 * wait for the first fold's heavy writes; "what runs there now" still follows the newest build, and
 * an undocumented endpoint is still announced once.
 */
import { nothingElse, startFoldLocks, type FoldLocks } from './support/fold-locks';

let folds: FoldLocks;

beforeAll(async () => {
  folds = await startFoldLocks('rollout', { webhook: true });
});
afterAll(async () => {
  await folds?.close();
});

/** Which build's row "what runs there now" in production shows for GET /items, and its last seen. */
async function currentOfItems(): Promise<{ name: string; lastSeen: Date }> {
  const [current] = (await folds.ds.query(
    `SELECT r.name, c.last_seen AS "lastSeen" FROM evidence_current c
       JOIN endpoints e ON e.id = c.endpoint_id JOIN environment_rows r ON r.id = c.row_id
      WHERE c.project_id = $1 AND c.kind = 'production' AND e.method = 'GET' AND e.path = '/items'`,
    [folds.project.id],
  )) as [{ name: string; lastSeen: Date }];
  return current;
}

it("a new build's first fold does not hold up the old build's folds while it writes its runtime and consumers", async () => {
  // The old build runs: what runs now in production is its.
  const old = await folds.queuedRow('production', 'b1', '2026-11-01T00:00:00Z', ['/items']);
  expect(await folds.evidence.foldQueued(folds.project, old, nothingElse)).toEqual({
    folded: 1,
    left: false,
  });
  expect((await currentOfItems()).name).toBe('b1');

  // The new build's first fold (it makes what runs now its) pauses in its heavy writes; the old
  // build's next fold (it touches what runs now, still its) must not wait.
  const rolled = await folds.queuedRow('production', 'b2', '2026-11-02T00:00:00Z', ['/items']);
  await folds.queuedRow('production', 'b1', '2026-11-01T00:00:00Z', ['/items']);
  expect(await folds.foldBeside(rolled, old)).toBe('folded');

  // What runs now follows the newest build, whichever fold committed first.
  expect((await currentOfItems()).name).toBe('b2');
  // The old build touching again leaves it the new build's, its last seen where the new build saw it.
  const before = await currentOfItems();
  await folds.queuedRow('production', 'b1', '2026-11-01T00:00:00Z', ['/items']);
  expect(await folds.evidence.foldQueued(folds.project, old, nothingElse)).toEqual({
    folded: 1,
    left: false,
  });
  expect(await currentOfItems()).toEqual(before);
  // The new build's next fold moves its last seen on.
  await new Promise((resolve) => setTimeout(resolve, 5));
  await folds.queuedRow('production', 'b2', '2026-11-02T00:00:00Z', ['/items']);
  expect(await folds.evidence.foldQueued(folds.project, rolled, nothingElse)).toEqual({
    folded: 1,
    left: false,
  });
  const after = await currentOfItems();
  expect(after.name).toBe('b2');
  expect(after.lastSeen.getTime()).toBeGreaterThan(before.lastSeen.getTime());
});

it('two builds reaching a new undocumented endpoint at once: neither waits, announced once', async () => {
  const first = await folds.queuedRow('production', 'b3', '2026-11-03T00:00:00Z', ['/items', '/fresh']);
  const second = await folds.queuedRow('production', 'b4', '2026-11-04T00:00:00Z', ['/items', '/fresh']);
  expect(await folds.foldBeside(first, second)).toBe('folded');
  const announced = (await folds.ds.query(
    `SELECT body FROM webhook_deliveries WHERE project_id = $1 AND event_type = 'endpoints.undocumented'`,
    [folds.project.id],
  )) as Array<{ body: string }>;
  expect(
    announced.flatMap(({ body }) =>
      (JSON.parse(body) as { data: { endpoints: Array<{ path: string }> } }).data.endpoints.map((e) => e.path),
    ),
  ).toEqual(['/fresh']);
  expect((await currentOfItems()).name).toBe('b4');
});
