import type { BatchPart } from '../captures/batch-statement';
import { type WrittenBatch, writtenBatch } from '../captures/captures.repository';

/** Batch statements a replica runs at once (of its pool's connections; the rest serve reads and captures). */
export const WRITERS = 4;
/** Batches one statement writes at most. */
export const BATCHES_PER_STATEMENT = 8;

/** What a statement of several batches answers for each. */
type Answer = WrittenBatch & { captured: boolean };

interface Waiting {
  part: BatchPart;
  resolve: (written: WrittenBatch) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes batches with at most `writers` batch statements at once; batches that come while they all
 * run wait and are then written together, up to `most` in one statement (issue 20: a batch
 * statement's fixed cost, its plan's start, locks and commit, is about half of a 40-row batch's
 * PostgreSQL CPU, and a statement of several batches pays it once). One statement holds at most one
 * batch of a capture and distinct batch ids (a later one waits for the next statement), its parts
 * sorted by capture id, so that statements lock their captures' rows in one order. Each batch is
 * answered once its statement committed. When a statement of several fails, each of its batches
 * is written again alone, so a failing batch fails no other.
 */
export class BatchWriter {
  private readonly waiting: Waiting[] = [];
  private running = 0;

  constructor(
    private readonly write: (parts: readonly BatchPart[]) => Promise<Answer[]>,
    private readonly writers = WRITERS,
    private readonly most = BATCHES_PER_STATEMENT,
  ) {}

  /** Writes `part` (alone or with others). @throws Error when its capture no longer exists, or its statement failed. */
  submit(part: BatchPart): Promise<WrittenBatch> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ part, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    while (this.running < this.writers && this.waiting.length > 0) {
      const group = this.take();
      this.running++;
      void this.run(group).finally(() => {
        this.running--;
        this.next();
      });
    }
  }

  /** The oldest waiting batches, up to `most`, of distinct captures and ids (the others keep their place). */
  private take(): Waiting[] {
    const group: Waiting[] = [];
    const captures = new Set<string>();
    const ids = new Set<string>();
    const left: Waiting[] = [];
    for (const waiting of this.waiting) {
      const { captureId, batchId } = waiting.part;
      if (group.length < this.most && !captures.has(captureId) && !ids.has(batchId)) {
        group.push(waiting);
        captures.add(captureId);
        ids.add(batchId);
      } else left.push(waiting);
    }
    this.waiting.splice(0, this.waiting.length, ...left);
    return group.sort((a, b) =>
      a.part.captureId < b.part.captureId ? -1 : a.part.captureId > b.part.captureId ? 1 : 0,
    );
  }

  private async run(group: Waiting[]): Promise<void> {
    if (group.length > 1) {
      let answers: Answer[] | null = null;
      try {
        answers = await this.write(group.map((waiting) => waiting.part));
      } catch {
        // Rolled back whole: each batch again alone, below.
      }
      if (answers !== null) {
        group.forEach((waiting, k) => settle(waiting, answers[k]));
        return;
      }
    }
    await Promise.all(
      group.map(async (waiting) => {
        try {
          settle(waiting, (await this.write([waiting.part]))[0]);
        } catch (error) {
          waiting.reject(error);
        }
      }),
    );
  }
}

function settle(waiting: Waiting, answer: Answer | undefined): void {
  let written: WrittenBatch;
  try {
    written = writtenBatch(answer, waiting.part.captureId);
  } catch (error) {
    waiting.reject(error);
    return;
  }
  waiting.resolve(written);
}
