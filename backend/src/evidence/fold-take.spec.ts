import type { EntityManager } from 'typeorm';
import type { EnvironmentRow, EvidenceRepository, QueuedBatch } from './evidence.repository';
import { EvidenceService, FOLD_SLICE_MS } from './evidence.service';

const ROW: EnvironmentRow = {
  id: 'row-1',
  kind: 'production',
  name: 'build-1',
  scope: '',
  pullRequest: null,
  build: 'build-1',
  commit: null,
  firstSeen: new Date('2026-11-29T00:00:00Z'),
};

/**
 * Issue 20: a fold's batches lived through its whole transaction (unpacked at the take, their
 * runtime minutes and consumer days read at its end), so a replica's young-generation collections
 * copied and promoted them. Each batch's lists are read once, at the take, before the fold's first
 * write; what the listener writes later in the transaction is what it folded then.
 */
it('reads the batches it takes once, at the take, before the fold writes anything', async () => {
  const reads: string[] = [];
  const batch = (n: number): QueuedBatch => ({
    build: 'build-1',
    commit: null,
    lastSeen: `2026-11-29T10:0${n}:00.000Z`,
    get exchanges() {
      reads.push(`exchanges ${n}`);
      return [];
    },
    get minutes() {
      reads.push(`minutes ${n}`);
      return [{ method: 'GET', path: `/m${n}` }];
    },
    get consumers() {
      reads.push(`consumers ${n}`);
      return [];
    },
  });
  const repository = {
    lockRowIfFree: () => Promise.resolve(ROW),
    takeQueued: () => Promise.resolve({ batches: [batch(1), batch(2)], left: true }),
    touchRow: (_db: unknown, _id: string, lastSeen: string) => {
      reads.push(`touch ${lastSeen}`);
      return Promise.resolve(ROW);
    },
  };
  const evidence = new EvidenceService(
    repository as unknown as EvidenceRepository,
    null as never,
    null as never,
    null as never,
  );
  const folded = await evidence.foldQueued(
    { id: 'project-1', slug: 'shop' },
    ROW.id,
    () => {
      const paths: string[] = [];
      return {
        add: (b) => paths.push(...b.minutes.map((m) => m.path), ...b.consumers.map((c) => c.path)),
        write: (_manager, row) => {
          reads.push(`write ${row.id} ${paths.join(' ')}`);
          return Promise.resolve();
        },
      };
    },
    (work) => work({} as EntityManager),
  );
  expect(folded).toEqual({ folded: 2, left: true });
  expect(reads).toEqual([
    'exchanges 1',
    'minutes 1',
    'consumers 1',
    'exchanges 2',
    'minutes 2',
    'consumers 2',
    'touch 2026-11-29T10:02:00.000Z',
    'write row-1 /m1 /m2',
  ]);
});

/**
 * Issue 20: a fold read and folded every batch it took in one go, hundreds under load, and held
 * the replica's event loop meanwhile (0.2 s quiet, 3–4 s loaded): every agent message and ack
 * waited. Now it lets the loop run once it has folded for FOLD_SLICE_MS, and folds the same.
 */
it('lets the event loop run between slices of a long take', async () => {
  const seen: string[] = [];
  // Each batch's list takes a third of a slice to read, so a slice ends every third batch or so.
  const busy = (): void => {
    const until = performance.now() + FOLD_SLICE_MS / 3;
    while (performance.now() < until);
  };
  const batch = (n: number): QueuedBatch => ({
    build: null,
    commit: null,
    lastSeen: '2026-11-29T10:00:00.000Z',
    get exchanges() {
      busy();
      seen.push(`batch ${n}`);
      return [];
    },
    minutes: [],
    consumers: [],
  });
  const repository = {
    lockRowIfFree: () => Promise.resolve(ROW),
    takeQueued: () => Promise.resolve({ batches: Array.from({ length: 12 }, (_, n) => batch(n)), left: false }),
    touchRow: () => Promise.resolve(ROW),
  };
  const evidence = new EvidenceService(
    repository as unknown as EvidenceRepository,
    null as never,
    null as never,
    null as never,
  );
  const folding = evidence.foldQueued(
    { id: 'project-1', slug: 'shop' },
    ROW.id,
    () => ({ add: () => undefined, write: () => Promise.resolve() }),
    (work) => work({} as EntityManager),
  );
  // Other work of the replica, asked for once the fold began reading.
  const other = (): void => {
    if (seen.length === 0) setImmediate(other);
    else seen.push('other work');
  };
  setImmediate(other);
  expect(await folding).toEqual({ folded: 12, left: false });
  const at = seen.indexOf('other work');
  expect(at).toBeGreaterThan(0);
  expect(at).toBeLessThan(seen.length - 1);
  expect(seen.filter((entry) => entry !== 'other work')).toEqual(Array.from({ length: 12 }, (_, n) => `batch ${n}`));
});
