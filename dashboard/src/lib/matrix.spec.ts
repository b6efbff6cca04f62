import type { VersionMatrixResponse } from '@spectator/shared';
import { mergeMatrixPages, viewMatrix } from './matrix';

const endpoint = (id: string, method: string, path: string) => ({ id, method, path, version: '1.1' });
const row = (kind: 'ci' | 'staging' | 'production', name: string) => ({
  kind,
  name,
  commit: 'abc',
  lastSeen: '2026-01-01T00:00:00Z',
});

const first: VersionMatrixResponse = {
  endpoints: [endpoint('a', 'GET', '/users'), endpoint('b', 'POST', '/users')],
  rows: [row('ci', 'pr-2'), row('staging', 's-1')],
  cells: [
    [{ version: '1.1' }, { version: '1.0' }],
    [{ version: '1.0' }, { version: 'N/A' }],
  ],
  runtime: [[{ column: 1, requests: 10, errorRate: 0.1, p95: 42 }], []],
  nextCursor: 'next',
};

describe('viewMatrix', () => {
  it('keeps the rows of one kind and the columns matching the filter, cells aligned', () => {
    const view = viewMatrix(first, 'staging', 'post');
    expect(view.endpoints.map((e) => e.id)).toEqual(['b']);
    expect(view.rows).toEqual([{ row: first.rows[1], cells: [{ version: 'N/A' }], runtime: [null] }]);
  });

  it('puts each runtime beside its cell', () => {
    expect(viewMatrix(first, undefined, 'post').rows.map((r) => r.runtime)).toEqual([
      [{ column: 1, requests: 10, errorRate: 0.1, p95: 42 }],
      [null],
    ]);
  });

  it('shows everything without filters', () => {
    expect(viewMatrix(first, undefined, '').rows.map((r) => r.cells.map((c) => c.version))).toEqual([
      ['1.1', '1.0'],
      ['1.0', 'N/A'],
    ]);
  });
});

describe('mergeMatrixPages', () => {
  it('aligns the next page by endpoint id and reads N/A where an earlier row never saw a new endpoint', () => {
    const next: VersionMatrixResponse = {
      endpoints: [endpoint('c', 'DELETE', '/users/{userId}'), endpoint('a', 'GET', '/users')],
      rows: [row('production', 'p-1')],
      cells: [[{ version: '2.0', drift: true }, { version: '1.0' }]],
      runtime: [
        [
          { column: 0, requests: 5, errorRate: 0, p95: 3 },
          { column: 1, requests: 7, errorRate: 0, p95: 4 },
        ],
      ],
      nextCursor: null,
    };
    const merged = mergeMatrixPages(first, next);
    expect(merged.endpoints.map((e) => e.id)).toEqual(['a', 'b', 'c']);
    expect(merged.cells).toEqual([
      [{ version: '1.1' }, { version: '1.0' }, { version: 'N/A' }],
      [{ version: '1.0' }, { version: 'N/A' }, { version: 'N/A' }],
      [{ version: '1.0' }, { version: 'N/A' }, { version: '2.0', drift: true }],
    ]);
    // Runtime follows its endpoint: DELETE (column 0 of the next page) is column 2 now.
    expect(merged.runtime).toEqual([
      [{ column: 1, requests: 10, errorRate: 0.1, p95: 42 }],
      [],
      [
        { column: 0, requests: 7, errorRate: 0, p95: 4 },
        { column: 2, requests: 5, errorRate: 0, p95: 3 },
      ],
    ]);
    expect(merged.nextCursor).toBeNull();
  });
});
