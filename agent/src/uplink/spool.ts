import fs from 'node:fs';
import path from 'node:path';
import type { BatchMessage, WireCapture } from '@spectator/shared';
import type { Logger } from '../log';
import type { Metrics } from '../metrics';

/** A batch waiting for its acknowledgement. */
export interface SpoolEntry {
  batch: BatchMessage;
  /** The capture the batch belongs to, re-announced after a reconnect (the backend upserts it). */
  capture: WireCapture;
  /** The batch as sent (JSON text). */
  text: string;
  /** Connection generation it was last written on; 0 = not yet. */
  sentOn: number;
  file: string | null;
}

/** A capture's end not yet acknowledged (`capture-ended`): sent again after every reconnect until it is. */
export interface SpooledEnd {
  /** The capture, re-announced before its end after a reconnect (the backend may never have stored it). */
  capture: WireCapture;
  endedAt: string;
  file: string | null;
}

export interface SpoolOptions {
  /** Directory to keep batches in across agent restarts, or null for memory only. */
  dir: string | null;
  /** Batches kept at most. Default 1,000. */
  maxBatches?: number;
  /** Bytes of batch text kept at most. Default 64 MiB. */
  maxBytes?: number;
  log: Logger;
  metrics: Metrics;
}

/**
 * Unacknowledged batches in send order, bounded; when full the oldest are dropped and counted.
 * With a directory each batch is also a file (written when spooled, deleted when acknowledged),
 * so batches survive an agent restart and are resent by the next run. Captures' ends waiting for
 * their acknowledgement are kept the same way (one per capture), at most as many as batches, the
 * oldest dropped and counted when full (an app restarting in a loop while the backend is away).
 */
export class Spool {
  private readonly entries = new Map<string, SpoolEntry>();
  private readonly endEntries = new Map<string, SpooledEnd>();
  private bytes = 0;
  private sequence = 0;
  private readonly maxBatches: number;
  private readonly maxBytes: number;

  constructor(private readonly options: SpoolOptions) {
    this.maxBatches = options.maxBatches ?? 1_000;
    this.maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
    options.metrics.gauge('batches_spooled', () => this.entries.size);
    options.metrics.gauge('capture_ends_spooled', () => this.endEntries.size);
    if (options.dir) this.load(options.dir);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Entries in the order they were spooled. */
  values(): IterableIterator<SpoolEntry> {
    return this.entries.values();
  }

  add(batch: BatchMessage, capture: WireCapture): SpoolEntry {
    const text = JSON.stringify(batch);
    const entry: SpoolEntry = { batch, capture, text, sentOn: 0, file: null };
    if (this.options.dir) entry.file = this.write(this.options.dir, entry);
    this.entries.set(batch.batchId, entry);
    this.bytes += text.length;
    while (this.entries.size > this.maxBatches || (this.bytes > this.maxBytes && this.entries.size > 1))
      this.dropOldest();
    return entry;
  }

  /** Captures' ends not yet acknowledged, in the order they were spooled. */
  ends(): IterableIterator<SpooledEnd> {
    return this.endEntries.values();
  }

  /** Keep a capture's end until `removeEnd`; a capture ends once, so a second end of it is ignored. */
  addEnd(capture: WireCapture, endedAt: string): SpooledEnd {
    const known = this.endEntries.get(capture.id);
    if (known) return known;
    const end: SpooledEnd = { capture, endedAt, file: null };
    if (this.options.dir)
      end.file = this.writeFile(this.options.dir, `end-${capture.id}`, { capture, end: { endedAt } });
    this.endEntries.set(capture.id, end);
    while (this.endEntries.size > this.maxBatches) this.dropOldestEnd();
    return end;
  }

  private dropOldestEnd(): void {
    const oldest = this.endEntries.values().next().value as SpooledEnd | undefined;
    if (!oldest) return;
    this.removeEnd(oldest.capture.id);
    this.options.metrics.inc('spool_dropped_total');
    this.options.log.warn(
      { captureId: oldest.capture.id },
      'spool full: dropped the oldest unacknowledged capture end',
    );
  }

  /** Remove an acknowledged (or refused) end; returns it when it was here. */
  removeEnd(captureId: string): SpooledEnd | undefined {
    const end = this.endEntries.get(captureId);
    if (!end) return undefined;
    this.endEntries.delete(captureId);
    if (end.file) fs.rmSync(end.file, { force: true });
    return end;
  }

  get(batchId: string): SpoolEntry | undefined {
    return this.entries.get(batchId);
  }

  /** Remove an acknowledged (or rejected) batch; returns it when it was here. */
  remove(batchId: string): SpoolEntry | undefined {
    const entry = this.entries.get(batchId);
    if (!entry) return undefined;
    this.entries.delete(batchId);
    this.bytes -= entry.text.length;
    // Synchronous (about once a second): a stopping agent must not leave acknowledged batches behind.
    if (entry.file) fs.rmSync(entry.file, { force: true });
    return entry;
  }

  private dropOldest(): void {
    const oldest = this.entries.values().next().value as SpoolEntry | undefined;
    if (!oldest) return;
    this.remove(oldest.batch.batchId);
    this.options.metrics.inc('spool_dropped_total');
    this.options.log.warn(
      { batchId: oldest.batch.batchId, observations: oldest.batch.observations.length },
      'spool full: dropped the oldest unacknowledged batch',
    );
  }

  private write(dir: string, entry: SpoolEntry): string | null {
    return this.writeFile(dir, entry.batch.batchId, { capture: entry.capture, batch: entry.batch });
  }

  private writeFile(dir: string, name: string, content: object): string | null {
    // Zero-padded time + sequence keeps file names in send order across restarts.
    const file = path.join(
      dir,
      `${String(Date.now()).padStart(15, '0')}-${String(this.sequence++).padStart(6, '0')}-${name}.json`,
    );
    try {
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(content));
      fs.renameSync(`${file}.tmp`, file);
      return file;
    } catch (err) {
      this.options.log.error(
        { dir, code: (err as NodeJS.ErrnoException).code },
        'cannot write spool file; kept in memory only',
      );
      return null;
    }
  }

  private load(dir: string): void {
    let names: string[];
    try {
      names = fs
        .readdirSync(dir)
        .filter((name) => name.endsWith('.json'))
        .sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        this.options.log.error({ dir, code: (err as NodeJS.ErrnoException).code }, 'cannot read spool directory');
      return;
    }
    for (const name of names) {
      const file = path.join(dir, name);
      try {
        const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as {
          capture: WireCapture;
          batch: BatchMessage;
          end?: { endedAt: string };
        };
        if (typeof stored.end?.endedAt === 'string' && typeof stored.capture?.id === 'string') {
          this.endEntries.set(stored.capture.id, { capture: stored.capture, endedAt: stored.end.endedAt, file });
          continue;
        }
        if (
          stored.batch?.type !== 'batch' ||
          typeof stored.batch.batchId !== 'string' ||
          typeof stored.capture?.id !== 'string'
        )
          throw new Error('not a spooled batch');
        const text = JSON.stringify(stored.batch);
        this.entries.set(stored.batch.batchId, { batch: stored.batch, capture: stored.capture, text, sentOn: 0, file });
        this.bytes += text.length;
      } catch (err) {
        this.options.log.error({ file, problem: (err as Error).message }, 'unreadable spool file removed');
        fs.rmSync(file, { force: true });
      }
    }
    if (this.entries.size > 0 || this.endEntries.size > 0)
      this.options.log.info(
        { dir, batches: this.entries.size, captureEnds: this.endEntries.size },
        'unacknowledged batches loaded from the spool',
      );
    while (this.entries.size > this.maxBatches) this.dropOldest();
    while (this.endEntries.size > this.maxBatches) this.dropOldestEnd();
  }
}
