import type { AggregatedRow } from './batch-statement';
import {
  batchPart,
  textArrayLiteral,
  touchedEndpoints,
  writeBatchParameters,
  writeBatchStatement,
} from './batch-statement';

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
    expect(parameters.slice(26, 30)).toEqual(['{"b"}', '{"p"}', '{"c"}', '{4}']);
    expect(parameters.slice(3, 6)).toEqual([null, '{"a","b","content-type"}', '{1,1}']);
    // query from/to, request headers from/to, response headers from/to
    expect(parameters.slice(18, 24)).toEqual(['{1,1}', '{2,2}', '{1,1}', '{0,0}', '{3,1}', '{3,2}']);
  });

  it('begins with the endpoints the batch touches, each once', () => {
    const rows = [
      row,
      { ...row, status: 400 },
      { ...row, path: '/posts/{id}' },
      { ...row, method: 'PUT', path: '/posts/{id}' },
    ];
    expect(writeBatchParameters(header, rows).slice(0, 3)).toEqual([
      '{1,1,1}',
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

  it('ends with the batch, its cap, the evidence to queue and the noise counts (null when absent), each an array but the packed lists', () => {
    const evidence = { rowId: 'r', build: 'b1', commit: null, exchanges: '[1]', minutes: '[2]', consumers: '[3]' };
    const unmatched = { requests: 4, paths: 2 };
    expect(writeBatchParameters({ ...header, evidence, unmatched }, [row]).slice(26)).toEqual([
      '{"b"}',
      '{"p"}',
      '{"c"}',
      '{4}',
      '{NULL}',
      '{"r"}',
      '{"b1"}',
      '{null}',
      '[1]',
      '[2]',
      '[3]',
      '{4}',
      '{2}',
    ]);
    expect(writeBatchParameters({ ...header, maxEndpoints: 9 }, [row]).slice(30)).toEqual([
      '{9}',
      ...Array(3).fill('{null}'),
      ...Array(3).fill(''),
      '{NULL}',
      '{NULL}',
    ]);
    // The bodies' instance extras, after the rows' other columns: one text per row.
    expect(writeBatchParameters(header, [{ ...row, res_inst: '01' }]).slice(24, 26)).toEqual(['{null}', '{"01"}']);
  });

  it('sends the shapes as one JSON object', () => {
    const parameters = writeBatchParameters({ ...header, shapes: [['fp1', { kind: 'string' }]] }, []);
    expect(JSON.parse(parameters[3] as string)).toEqual({ fp1: { kind: 'string' } });
  });
});

describe('writeBatchStatement', () => {
  it('writes several batches in one statement: rows and touched keys numbered by batch, name bounds offset', () => {
    const first = batchPart({ ...header, shapes: [['fp1', { kind: 'string' }]] }, [row, { ...row, status: 400 }]);
    // Only the second batch is evidence: its packed lists follow the first's none, after the separator.
    const evidence = {
      rowId: 'r',
      build: null,
      commit: null,
      exchanges: '[["method"]]',
      minutes: '[]',
      consumers: '[]',
    };
    const second = batchPart(
      { ...header, batchId: 'b2', captureId: 'c2', shapes: [['fp2', { kind: 'number' }]], evidence },
      [{ ...row, query: ['q'], res_h: [] }],
    );
    const { name, text, values } = writeBatchStatement([first, second]);
    // One statement, whatever the count of batches: prepared and planned once per connection.
    expect(name).toBe('spectator_write_batch');
    expect(writeBatchStatement([first])).toMatchObject({ name, text });
    expect(values.slice(0, 3)).toEqual(['{1,2}', '{"POST","POST"}', '{"/posts","/posts"}']);
    expect(JSON.parse(values[3] as string)).toEqual({ fp1: { kind: 'string' }, fp2: { kind: 'number' } });
    expect(values.slice(4, 7)).toEqual(['{"a","b","content-type","q"}', '{1,1,2}', '{"POST","POST","POST"}']);
    // The second batch's query names are the fourth name; its empty lists stay empty slices.
    expect(values.slice(18, 24)).toEqual(['{1,1,4}', '{2,2,4}', '{1,1,4}', '{0,0,3}', '{3,3,4}', '{3,3,3}']);
    expect(values.slice(26)).toEqual([
      '{"b","b2"}',
      '{"p","p"}',
      '{"c","c2"}',
      '{4,4}',
      '{NULL,NULL}',
      '{null,"r"}',
      '{null,null}',
      '{null,null}',
      '\u001e[["method"]]',
      '\u001e[]',
      '\u001e[]',
      '{NULL,NULL}',
      '{NULL,NULL}',
    ]);
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
