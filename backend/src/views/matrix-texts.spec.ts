import { NOT_SEEN_VERSION, type VersionCell } from '@spectator/shared';
import { matrixTexts } from './matrix-texts';
import { NOT_SEEN_JSON } from './views.repository';

describe('matrixTexts.notSeen', () => {
  it('is a JSON array of one N/A cell per column', () => {
    for (const columns of [0, 1, 3, 1_000]) {
      const cells = JSON.parse(matrixTexts.notSeen(columns)) as VersionCell[];
      expect(cells).toHaveLength(columns);
      expect(cells.every((cell) => cell.version === NOT_SEEN_VERSION && Object.keys(cell).length === 1)).toBe(true);
    }
  });

  it('splices the same cell text the SQL writes for a row that never saw an endpoint', () => {
    expect(matrixTexts.notSeen(2)).toBe(`[${NOT_SEEN_JSON},${NOT_SEEN_JSON}]`);
    expect(JSON.parse(NOT_SEEN_JSON)).toEqual({ version: NOT_SEEN_VERSION });
  });
});
