import pino from 'pino';
import type { Runtime } from '../config/runtime';
import type { ConsumersService } from '../consumers/consumers.service';
import type { EvidenceService } from '../evidence/evidence.service';
import { MetricsService } from '../health/metrics.service';
import type { RuntimeService } from '../runtime/runtime.service';
import { DomainError, ErrorCode } from '../common/errors';
import { EvidenceFolder, GATHER_MS, READ_FOLD_MS, SETTLE_MS } from './evidence-folder';

/**
 * When a row's folds begin (issue 20): GATHER_MS after the oldest batch waiting for one, taking
 * every batch committed meanwhile; at once for an urgent waiter (a CI capture's end); not at all when
 * another replica's fold took the batches. PostgreSQL is not involved: the evidence service is a
 * stand-in that counts the folds asked of it, each ending when the test says, on jest's clock.
 */
describe('EvidenceFolder', () => {
  const project = { id: 'p', slug: 'p' };
  let ends: Array<() => void>;
  let folds: jest.Mock;
  /** Whether the batches asked about are still queued (false: another replica folded them). */
  let queued: boolean;
  let folder: EvidenceFolder;
  let metrics: MetricsService;

  beforeEach(() => {
    jest.useFakeTimers();
    ends = [];
    queued = true;
    folds = jest.fn(
      () =>
        new Promise<{ folded: number; left: boolean }>((resolve) =>
          ends.push(() => resolve({ folded: 1, left: false })),
        ),
    );
    const evidence = {
      foldQueued: folds,
      anyQueued: jest.fn(() => Promise.resolve(queued)),
      lastQueued: jest.fn(() => Promise.resolve(queued ? '99' : null)),
      queuedRows: jest.fn(() => Promise.resolve([])),
      existingRowIdOf: jest.fn(() => Promise.resolve('row')),
    } as unknown as EvidenceService;
    const runtime: Runtime = {
      databaseUrl: 'postgres://nobody@127.0.0.1:1/none',
      log: pino({ level: 'silent' }),
      config: {} as Runtime['config'],
    };
    metrics = new MetricsService();
    folder = new EvidenceFolder(evidence, {} as RuntimeService, {} as ConsumersService, runtime, metrics);
  });
  afterEach(async () => {
    for (const end of ends) end();
    await folder.onModuleDestroy();
    jest.useRealTimers();
  });

  /** Lets the folder's promises run (no time passes). */
  const settled = (): Promise<void> => jest.advanceTimersByTimeAsync(0);
  /** Settles batch `id` of `row` (`urgent`: a CI capture's end, after it), noting when it is told. */
  const settle = (id: string | null, urgent = false, row = 'row'): { told: boolean } => {
    const waiter = { told: false };
    void (urgent ? folder.settleEnded(project, row, true) : folder.settle(project, row, id)).then(
      () => (waiter.told = true),
    );
    return waiter;
  };

  it('folds GATHER_MS after the oldest batch came, every batch that came meanwhile in one fold', async () => {
    const first = settle('1');
    await jest.advanceTimersByTimeAsync(GATHER_MS / 2);
    const second = settle('2');
    await jest.advanceTimersByTimeAsync(GATHER_MS / 2 - 1);
    expect(folds).toHaveBeenCalledTimes(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(folds).toHaveBeenCalledTimes(1);
    // Batches committed during the fold wait for the next one, GATHER_MS after the first of them.
    const during = settle('3');
    ends.shift()?.();
    await settled();
    expect([first.told, second.told, during.told]).toEqual([true, true, false]);
    await jest.advanceTimersByTimeAsync(GATHER_MS - 1);
    expect(folds).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(folds).toHaveBeenCalledTimes(2);
    ends.shift()?.();
    await settled();
    expect(during.told).toBe(true);
  });

  it("folds at once for an urgent waiter (a CI capture's end), also one that comes while others gather", async () => {
    const ci = settle('1', true);
    await settled();
    expect(folds).toHaveBeenCalledTimes(1);
    ends.shift()?.();
    await settled();
    expect(ci.told).toBe(true);
    const gathering = settle('2');
    await jest.advanceTimersByTimeAsync(GATHER_MS / 2);
    expect(folds).toHaveBeenCalledTimes(1);
    const urgent = settle('3', true);
    await settled();
    expect(folds).toHaveBeenCalledTimes(2);
    ends.shift()?.();
    await settled();
    expect([gathering.told, urgent.told]).toEqual([true, true]);
  });

  it("folds nothing when another replica's fold took the batches meanwhile; a sweep's round folds", async () => {
    queued = false;
    const taken = settle('1');
    await jest.advanceTimersByTimeAsync(GATHER_MS);
    expect(folds).toHaveBeenCalledTimes(0);
    expect(taken.told).toBe(true);
    const sweep = settle(null);
    await jest.advanceTimersByTimeAsync(GATHER_MS);
    expect(folds).toHaveBeenCalledTimes(1);
    ends.shift()?.();
    await settled();
    expect(sweep.told).toBe(true);
  });

  it("tells a capture's end at once, folding nothing, when its row has nothing queued", async () => {
    queued = false;
    const end = settle(null, true);
    await settled();
    expect(folds).toHaveBeenCalledTimes(0);
    expect(end.told).toBe(true);
  });

  it('folds rows apart: a fold of one row does not hold up another', async () => {
    settle('1', true, 'a');
    settle('2', true, 'b');
    await settled();
    expect(folds.mock.calls.map((call: unknown[]) => call[1])).toEqual(['a', 'b']);
  });

  it('stops gathering when the replica stops: the fold waiting for the interval begins at once', async () => {
    const waiter = settle('1');
    await settled();
    expect(folds).toHaveBeenCalledTimes(0);
    const stopped = folder.onModuleDestroy();
    await settled();
    expect(folds).toHaveBeenCalledTimes(1);
    ends.shift()?.();
    await stopped;
    await settled();
    expect(waiter.told).toBe(true);
  });

  describe("a gate's read", () => {
    const ci = { kind: 'ci' as const, pullRequest: '7' };
    /** Reads with the row held by another transaction (every fold finds it busy), noting the outcome. */
    const heldRead = (): { outcome: unknown } => {
      folds.mockImplementation(() => Promise.resolve('busy'));
      const read = { outcome: null as unknown };
      folder.readFolded(project, ci).then(
        () => (read.outcome = 'read'),
        (error: unknown) => (read.outcome = error),
      );
      return read;
    };

    it("waits past the capture end's bound while the row is held, and reads once its batches are folded", async () => {
      const read = heldRead();
      await jest.advanceTimersByTimeAsync(3 * SETTLE_MS);
      expect(read.outcome).toBeNull();
      expect(folds.mock.calls.length).toBeGreaterThan(3);
      queued = false;
      await jest.advanceTimersByTimeAsync(SETTLE_MS);
      expect(read.outcome).toBe('read');
      expect(metrics.readsWaitingForFolds.current).toBe(1);
      expect(metrics.readsUnfolded.current).toBe(0);
    });

    it('answers FoldPending (503, ask again) when its batches are still queued after READ_FOLD_MS', async () => {
      const read = heldRead();
      await jest.advanceTimersByTimeAsync(READ_FOLD_MS - 1);
      expect(read.outcome).toBeNull();
      await jest.advanceTimersByTimeAsync(SETTLE_MS);
      expect(read.outcome).toBeInstanceOf(DomainError);
      expect((read.outcome as DomainError).code).toBe(ErrorCode.FoldPending);
      expect(metrics.readsUnfolded.current).toBe(1);
    });

    it('reads at once, folding nothing, when its row has nothing queued', async () => {
      queued = false;
      await expect(folder.readFolded(project, ci)).resolves.toBeUndefined();
      expect(folds).not.toHaveBeenCalled();
      expect(metrics.readsWaitingForFolds.current).toBe(0);
    });
  });
});
