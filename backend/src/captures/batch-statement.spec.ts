import type { AggregatedRow } from './batch-statement';
import { textArrayLiteral, touchedEndpoints, writeBatchParameters } from './batch-statement';

const row: AggregatedRow = {
  method: 'POST',
  path: '/posts',
  status: 201,
  req_ct: 'application/json',
  req_fp: 'fp1',
  req_note: null,
  res_ct: 'text/html',
  res_fp: null,
  res_note: 'unshaped',
  query: ['a', 'b'],
  req_h: [],
  res_h: ['content-type'],
  count: 3,
  first_seen: '2026-01-01T00:00:00.000Z',
  last_seen: '2026-01-01T00:00:01.000Z',
};
const header = { batchId: 'b', projectId: 'p', captureId: 'c', observations: 4, shapes: [] };

describe('textArrayLiteral', () => {
  it('quotes every element and writes null as NULL (PostgreSQL reads null in any case)', () => {
    expect(textArrayLiteral(['a', '', 'NULL', null, 'x,y {z}', 'ünï☃'])).toBe('{"a","","NULL",null,"x,y {z}","ünï☃"}');
    expect(textArrayLiteral([])).toBe('{}');
  });

  it('escapes quotes and backslashes, and keeps control characters as they are (JSON escapes them otherwise)', () => {
    expect(textArrayLiteral(['say "hi"', 'back\\slash', null, 'line\nbreak'])).toBe(
      '{"say \\"hi\\"","back\\\\slash",NULL,"line\nbreak"}',
    );
  });
});

describe('writeBatchParameters', () => {
  it('gives each distinct name list one slice of the flat names array, and empty lists the empty slice', () => {
    const parameters = writeBatchParameters(header, [
      row,
      { ...row, status: 400, query: ['a', 'b'], res_h: ['a', 'b'] },
    ]);
    expect(parameters.slice(0, 6)).toEqual(['b', 'p', 'c', 4, null, '{"a","b","content-type"}']);
    // query from/to, request headers from/to, response headers from/to
    expect(parameters.slice(18, 24)).toEqual(['{1,1}', '{2,2}', '{1,1}', '{0,0}', '{3,1}', '{3,2}']);
  });

  it('ends with the endpoints the batch touches, each once', () => {
    const rows = [
      row,
      { ...row, status: 400 },
      { ...row, path: '/posts/{id}' },
      { ...row, method: 'PUT', path: '/posts/{id}' },
    ];
    expect(writeBatchParameters(header, rows).slice(24, 26)).toEqual([
      '{"POST","POST","PUT"}',
      '{"/posts","/posts/{id}","/posts/{id}"}',
    ]);
  });

  it('passes each column as an array literal', () => {
    const parameters = writeBatchParameters(header, [
      row,
      { ...row, res_ct: 'application/problem+json', count: 2 },
      { ...row, req_ct: null, count: 5 },
    ]);
    expect(parameters.slice(6, 18)).toEqual([
      '{"POST","POST","POST"}',
      '{"/posts","/posts","/posts"}',
      '{201,201,201}',
      '{"application/json","application/json",null}',
      '{"fp1","fp1","fp1"}',
      '{null,null,null}',
      '{"text/html","application/problem+json","text/html"}',
      '{null,null,null}',
      '{"unshaped","unshaped","unshaped"}',
      '{3,2,5}',
      '{"2026-01-01T00:00:00.000Z","2026-01-01T00:00:00.000Z","2026-01-01T00:00:00.000Z"}',
      '{"2026-01-01T00:00:01.000Z","2026-01-01T00:00:01.000Z","2026-01-01T00:00:01.000Z"}',
    ]);
  });

  it('ends with the evidence to queue, the noise counts (null when absent) and the instance extras', () => {
    const evidence = { rowId: 'r', build: 'b1', commit: null, exchanges: '[1]', minutes: '[2]', consumers: '[3]' };
    const unmatched = { requests: 4, paths: 2 };
    expect(writeBatchParameters({ ...header, evidence, unmatched }, [row]).slice(26)).toEqual([
      null,
      'r',
      'b1',
      null,
      '[1]',
      '[2]',
      '[3]',
      4,
      2,
      '{null}',
      '{null}',
    ]);
    expect(writeBatchParameters({ ...header, maxEndpoints: 9 }, [row]).slice(26)).toEqual([
      9,
      ...Array(8).fill(null),
      '{null}',
      '{null}',
    ]);
    // The bodies' instance extras, last: one text per row.
    expect(writeBatchParameters(header, [{ ...row, res_inst: '01' }]).slice(35)).toEqual(['{null}', '{"01"}']);
  });

  it('sends the shapes as one JSON object', () => {
    const parameters = writeBatchParameters({ ...header, shapes: [['fp1', { kind: 'string' }]] }, []);
    expect(JSON.parse(parameters[4] as string)).toEqual({ fp1: { kind: 'string' } });
  });
});

describe('touchedEndpoints', () => {
  it('lists each (method, path) of sorted rows once, keeping methods and paths paired', () => {
    const rows = [
      row,
      { ...row, status: 404 },
      { ...row, method: 'PUT' },
      { ...row, method: 'PUT', path: '/z' },
      { ...row, method: 'PUT', path: '/z', status: 500 },
    ];
    expect(touchedEndpoints(rows)).toEqual({ methods: ['POST', 'PUT', 'PUT'], paths: ['/posts', '/posts', '/z'] });
    expect(touchedEndpoints([])).toEqual({ methods: [], paths: [] });
  });
});
