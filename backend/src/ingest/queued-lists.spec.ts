/** What a batch queues beside its exchanges: its consumer days and runtime minutes (issue 20). */
import type { BatchMessage, WireObservation } from '@spectator/shared';
import { ALL_CALLS, OTHER_CONSUMERS } from '../consumers/consumers.repository';
import type { ConsumerDay, ConsumerRow } from '../consumers/consumers.repository';
import { consumerRows, packedConsumerDays, type QueuedConsumers } from '../consumers/consumers.service';
import { packList, unpackList } from '../evidence/queued-payload';

/** A batch's consumer calls as the fold reads them back and folds them. */
const consumerDays = (batch: BatchMessage): ConsumerRow[] =>
  consumerRows(unpackList<QueuedConsumers>(packedConsumerDays(batch)));
import type { RuntimeMinute } from '../runtime/runtime.repository';
import { packedRuntimeMinutes } from '../runtime/runtime.service';

const a = '0123456789abcdef';
const b = 'fedcba9876543210';
const row: WireObservation = {
  method: 'GET',
  path: '/posts',
  status: 200,
  query: [],
  requestHeaders: [],
  responseHeaders: [],
  request: null,
  response: null,
  count: 5,
  firstSeen: '2026-11-28T23:00:00.000Z',
  lastSeen: '2026-11-28T23:59:59.000Z',
};
const batchOf = (observations: WireObservation[]): BatchMessage => ({
  type: 'batch',
  batchId: '00000000-0000-4000-8000-000000000001',
  captureId: '00000000-0000-4000-8000-000000000002',
  shapes: {},
  observations,
});

describe('packedConsumerDays, read back', () => {
  it("merges a batch's calls per endpoint, status, consumer and day, keeping the latest call", () => {
    const rows = consumerDays(
      batchOf([
        { ...row, consumers: [{ id: a, count: 3, lastSeen: '2026-11-28T23:59:00.000Z' }], consumersOverflow: 2 },
        {
          ...row,
          count: 4,
          lastSeen: '2026-11-28T23:59:30.000Z',
          consumers: [
            { id: a, count: 1, lastSeen: '2026-11-28T23:59:30.000Z' },
            { id: b, count: 3, lastSeen: '2026-11-29T00:00:01.000Z' },
          ],
        },
        { ...row, status: 404, count: 1, consumers: [{ id: a, count: 1, lastSeen: '2026-11-28T10:00:00.000Z' }] },
        { ...row, path: '/quiet' },
      ]),
    );
    const at = (time: string): number => Date.parse(time);
    expect(rows.map((r) => [r.path, r.status, r.day, Object.fromEntries(r.consumers)])).toEqual([
      [
        '/posts',
        200,
        '2026-11-28',
        {
          [ALL_CALLS]: [9, at('2026-11-28T23:59:59.000Z')],
          [a]: [4, at('2026-11-28T23:59:30.000Z')],
          [OTHER_CONSUMERS]: [2, at('2026-11-28T23:59:59.000Z')],
        },
      ],
      ['/posts', 200, '2026-11-29', { [b]: [3, at('2026-11-29T00:00:01.000Z')] }],
      [
        '/posts',
        404,
        '2026-11-28',
        { [ALL_CALLS]: [1, at('2026-11-28T23:59:59.000Z')], [a]: [1, at('2026-11-28T10:00:00.000Z')] },
      ],
    ]);
  });

  it('is folded as the consumer days queued before session 24 were (a row still queued then)', () => {
    const batch = batchOf([
      { ...row, consumers: [{ id: a, count: 3, lastSeen: '2026-11-28T23:59:00.000Z' }], consumersOverflow: 2 },
      { ...row, status: 404, count: 1, consumers: [{ id: b, count: 1, lastSeen: '2026-11-29T00:00:01.000Z' }] },
    ]);
    const key = { method: 'GET', path: '/posts', status: 200 };
    const before: ConsumerDay[] = [
      { ...key, consumer: ALL_CALLS, day: '2026-11-28', calls: 5, lastCall: '2026-11-28T23:59:59.000Z' },
      { ...key, consumer: a, day: '2026-11-28', calls: 3, lastCall: '2026-11-28T23:59:00.000Z' },
      { ...key, consumer: OTHER_CONSUMERS, day: '2026-11-28', calls: 2, lastCall: '2026-11-28T23:59:59.000Z' },
      { ...key, status: 404, consumer: ALL_CALLS, day: '2026-11-28', calls: 1, lastCall: '2026-11-28T23:59:59.000Z' },
      { ...key, status: 404, consumer: b, day: '2026-11-29', calls: 1, lastCall: '2026-11-29T00:00:01.000Z' },
    ];
    expect(consumerRows(unpackList<ConsumerDay>(packList(before)))).toEqual(consumerDays(batch));
    // Both kinds in one fold (batches queued before and after an upgrade) add up.
    const both = consumerRows([
      ...unpackList<QueuedConsumers>(packList(before)),
      ...unpackList<QueuedConsumers>(packedConsumerDays(batch)),
    ]);
    expect(both.map((r) => Object.fromEntries(r.consumers)[ALL_CALLS]?.[0])).toEqual([10, 2]);
  });
});

describe('packedConsumerDays', () => {
  it('is the calls packed as the queue keeps them, byte for byte, method and path first', () => {
    const batch = batchOf([
      { ...row, consumers: [{ id: a, count: 3, lastSeen: '2026-11-28T23:59:00.000Z' }], consumersOverflow: 2 },
      { ...row, path: '/p"\\ü', consumers: [{ id: b, count: 1, lastSeen: '2026-11-29T00:00:01.000Z' }] },
      { ...row, consumers: [{ id: a, count: 1, lastSeen: '2026-11-28T23:59:30.000Z' }] },
    ]);
    const packed = packedConsumerDays(batch);
    const at = (time: string): number => Date.parse(time);
    expect(packed).toBe(
      packList([
        {
          method: 'GET',
          path: '/posts',
          status: 200,
          calls: [
            ALL_CALLS,
            10,
            at('2026-11-28T23:59:59.000Z'),
            a,
            4,
            at('2026-11-28T23:59:30.000Z'),
            OTHER_CONSUMERS,
            2,
            at('2026-11-28T23:59:59.000Z'),
          ],
        },
        {
          method: 'GET',
          path: '/p"\\ü',
          status: 200,
          calls: [ALL_CALLS, 5, at('2026-11-28T23:59:59.000Z'), b, 1, at('2026-11-29T00:00:01.000Z')],
        },
      ]),
    );
    expect(JSON.parse(packed)[0]).toEqual(['method', 'path', 'status', 'calls']);
    expect(packedConsumerDays(batchOf([row]))).toBe('[]');
  });
});

describe('packedRuntimeMinutes, read back', () => {
  it('sums an endpoint’s minute over its rows and merges their histograms', () => {
    const runtime = { ttfb: { '10': 1 }, ttlb: { '12': 1 } };
    const packed = packedRuntimeMinutes(
      batchOf([
        { ...row, count: 1, runtime },
        { ...row, status: 503, count: 1, lastSeen: '2026-11-28T23:59:01.000Z', runtime: { ...runtime, clientLeft: 1 } },
        { ...row, count: 2, lastSeen: '2026-11-29T00:00:00.000Z' },
      ]),
    );
    const minutes: RuntimeMinute[] = [
      {
        method: 'GET',
        path: '/posts',
        minute: '2026-11-28T23:59:00.000Z',
        requests: 2,
        serverErrors: 1,
        upstreamFailures: 0,
        clientLeft: 1,
        ttfb: { '10': 2 },
        ttlb: { '12': 2 },
      },
      {
        method: 'GET',
        path: '/posts',
        minute: '2026-11-29T00:00:00.000Z',
        requests: 2,
        serverErrors: 0,
        upstreamFailures: 0,
        clientLeft: 0,
        ttfb: {},
        ttlb: {},
      },
    ];
    // Packed as packList packs the minutes as objects, byte for byte, and read back as them.
    expect(packed).toBe(packList(minutes));
    expect(unpackList<RuntimeMinute>(packed)).toEqual(minutes);
  });

  it('packs a batch without rows as an empty list', () => {
    expect(packedRuntimeMinutes(batchOf([]))).toBe('[]');
  });
});
