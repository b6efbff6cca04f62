import { evaluateCell } from './cell';

const v10 = { id: 'v10', major: 1, minor: 0 };
const v11 = { id: 'v11', major: 1, minor: 1 };
const v20 = { id: 'v20', major: 2, minor: 0 };

/** Exchanges named by the versions they conform to. */
const exchange = (count: number, ...conformsTo: string[]): { count: number; conformsTo: string[] } => ({
  count,
  conformsTo,
});
const conforms = (versionId: string, e: { conformsTo: string[] }): boolean => e.conformsTo.includes(versionId);

describe('evaluateCell', () => {
  it.each([
    [
      'the lowest version every exchange conforms to',
      [exchange(5, 'v10', 'v11', 'v20'), exchange(1, 'v11', 'v20')],
      { versionId: 'v11', version: '1.1', drift: false },
    ],
    [
      'whatever order the versions come in',
      [exchange(1, 'v20', 'v10')],
      { versionId: 'v10', version: '1.0', drift: false },
    ],
    [
      'drift with the version most traffic conforms to',
      [exchange(10, 'v10'), exchange(1, 'v20')],
      { versionId: null, version: '1.0', drift: true },
    ],
    [
      'drift with the newest version on a tie',
      [exchange(3, 'v10'), exchange(3, 'v11')],
      { versionId: null, version: '1.1', drift: true },
    ],
    [
      'drift with the newest version when nothing conforms',
      [exchange(3)],
      { versionId: null, version: '2.0', drift: true },
    ],
  ])('gives %s', (_name, exchanges, expected) => {
    expect(evaluateCell([v20, v11, v10], exchanges, conforms)).toEqual(expected);
  });

  it('refuses an endpoint without versions', () => {
    expect(() => evaluateCell([], [exchange(1)], conforms)).toThrow('at least one version');
  });
});
