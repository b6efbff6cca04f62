import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { BatchMessage, WireCapture } from '@spectator/shared';
import { Metrics } from '../metrics';
import { Spool } from './spool';

const capture: WireCapture = { id: 'c1', startedAt: '2026-01-01T00:00:00.000Z', reason: 'agent-start' };
const batch = (id: string): BatchMessage => ({
  type: 'batch',
  batchId: id,
  captureId: 'c1',
  shapes: {},
  observations: [],
});
const log = pino({ level: 'silent' });

describe('Spool', () => {
  it('drops the oldest batch when full, and counts it', () => {
    const metrics = new Metrics();
    const spool = new Spool({ dir: null, maxBatches: 2, log, metrics });
    for (const id of ['a', 'b', 'c']) spool.add(batch(id), capture);
    expect([...spool.values()].map((e) => e.batch.batchId)).toEqual(['b', 'c']);
    expect(metrics.get('spool_dropped_total')).toBe(1);
    expect(metrics.get('batches_spooled')).toBe(2);
    expect(spool.remove('b')?.batch.batchId).toBe('b');
    expect(spool.remove('b')).toBeUndefined();
  });

  it('keeps batches on disk in order until acknowledged, and loads them in a new run', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spool-spec-'));
    try {
      const first = new Spool({ dir, log, metrics: new Metrics() });
      for (const id of ['a', 'b', 'c']) first.add(batch(id), capture);
      first.remove('b');
      fs.writeFileSync(path.join(dir, '999999999999999-broken.json'), '{not json');
      const second = new Spool({ dir, log, metrics: new Metrics() });
      expect([...second.values()].map((e) => [e.batch.batchId, e.capture.id, e.sentOn])).toEqual([
        ['a', 'c1', 0],
        ['c', 'c1', 0],
      ]);
      expect(fs.readdirSync(dir)).toHaveLength(2); // the unreadable file was removed
      second.remove('a');
      second.remove('c');
      expect(fs.readdirSync(dir)).toHaveLength(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps at most as many capture ends as batches, dropping the oldest and counting it', () => {
    const metrics = new Metrics();
    const spool = new Spool({ dir: null, maxBatches: 2, log, metrics });
    for (const id of ['c1', 'c2', 'c3']) spool.addEnd({ ...capture, id }, '2026-01-01T01:00:00.000Z');
    expect([...spool.ends()].map((end) => end.capture.id)).toEqual(['c2', 'c3']);
    expect(metrics.get('spool_dropped_total')).toBe(1);
  });

  it('keeps a capture end on disk beside the batches until acknowledged, once per capture', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spool-spec-'));
    try {
      const first = new Spool({ dir, log, metrics: new Metrics() });
      first.add(batch('a'), capture);
      first.addEnd(capture, '2026-01-01T01:00:00.000Z');
      first.addEnd(capture, '2026-01-01T02:00:00.000Z'); // a capture ends once: the first end stays
      const metrics = new Metrics();
      const second = new Spool({ dir, log, metrics });
      expect([...second.values()].map((e) => e.batch.batchId)).toEqual(['a']);
      expect([...second.ends()].map((end) => [end.capture, end.endedAt])).toEqual([
        [capture, '2026-01-01T01:00:00.000Z'],
      ]);
      expect(metrics.get('capture_ends_spooled')).toBe(1);
      expect(second.removeEnd('c1')?.endedAt).toBe('2026-01-01T01:00:00.000Z');
      expect(second.removeEnd('c1')).toBeUndefined();
      expect(fs.readdirSync(dir)).toHaveLength(1); // the batch's file only
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
