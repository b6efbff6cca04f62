/** A batch's exchanges as the queue keeps them (issue 20): packed in one pass. */
import type { EvidenceExchangeRow } from './evidence.repository';
import { type BatchExchange, packedExchanges } from './evidence.service';
import { packList, unpackList } from './queued-payload';

const exchange: BatchExchange = {
  method: 'POST',
  path: '/posts/{id}',
  status: 201,
  req_ct: 'application/json',
  req_fp: 'fp-request',
  res_ct: 'application/json',
  res_fp: 'fp-response',
  count: 3,
  last_seen: '2026-11-28T23:59:59.000Z',
  query: ['draft', 'page'],
  req_h: ['accept', 'content-type', 'x-api-key', 'x-tenant'],
};

describe('packedExchanges', () => {
  it("packs the exchanges' evidence as packList packs its rows, byte for byte", () => {
    const exchanges: BatchExchange[] = [
      exchange,
      { ...exchange, status: 400, req_ct: null, req_fp: null, res_ct: null, res_fp: null, query: [], req_h: [] },
      { ...exchange, path: '/quiet', query: undefined, req_h: undefined },
    ];
    const rows: EvidenceExchangeRow[] = [
      { ...exchange, query: ['draft', 'page'], req_h: ['x-api-key', 'x-tenant'] },
      { ...exchange, status: 400, req_ct: null, req_fp: null, res_ct: null, res_fp: null, query: [], req_h: [] },
      { ...exchange, path: '/quiet', query: null, req_h: null },
    ];
    expect(packedExchanges(exchanges)).toBe(packList(rows));
    expect(unpackList<EvidenceExchangeRow>(packedExchanges(exchanges))).toEqual(rows);
  });

  it('packs no exchanges as an empty list', () => {
    expect(packedExchanges([])).toBe('[]');
    expect(unpackList(packedExchanges([]))).toEqual([]);
  });
});
