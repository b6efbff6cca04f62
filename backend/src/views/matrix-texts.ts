/**
 * The version matrix's kept texts. Each environment row keeps its matrix cells pre-serialised
 * (`environment_rows.cells_json`): the JSON array of its `VersionCell`s in column order (documented
 * endpoints by path, method), so a matrix page is the rows' metadata plus the concatenation of stored
 * texts, with no per-cell work per request. `cells_columns` is the number of columns the text was
 * built for: documented endpoints are never removed, so an equal count means the same columns.
 *
 * Writers (evidence/evidence.service.ts) patch a row's text (a fold: the changed cells only) or
 * rebuild it in the transaction that changed its cells, holding the row's lock, and splice a column
 * into every row's text when the column set grows. A row without
 * text has no cells (every cell `N/A`). This file and its SQL (views.repository.ts) are the only
 * ones that know the text's form, and they order columns as `VersionStore.documentedCurrent` lists
 * them (path, then method): a field of a matrix cell is added there (and in `VersionCell`).
 */

import type { Queryable } from '../common/queryable';
import { NOT_SEEN_JSON, viewsRepository } from './views.repository';

/** How many rows' texts are held in memory at once while columns are inserted. */
const INSERT_CHUNK_ROWS = 100;

/** The matrix texts' interface: building, rebuilding and widening rows' texts (their SQL: views.repository.ts). */
export const matrixTexts = {
  /** The text of a row without cells: `N/A` in each of `columns` columns. */
  notSeen(columns: number): string {
    return columns === 0 ? '[]' : `[${NOT_SEEN_JSON}${`,${NOT_SEEN_JSON}`.repeat(columns - 1)}]`;
  },

  /**
   * The texts of the rows `rowIds` of a project built now from their cells, by row id (none when
   * the project has no documented endpoint). Nothing is written.
   */
  async build(db: Queryable, projectId: string, rowIds: readonly string[]): Promise<Map<string, string>> {
    const built = await viewsRepository.buildTexts(db, projectId, rowIds);
    return new Map(built.map(({ id, cells }) => [id, cells]));
  },

  /** Rewrites the stored texts of the rows `rowIds` of a project; the caller holds those rows' locks. */
  async rebuild(db: Queryable, projectId: string, rowIds: readonly string[]): Promise<void> {
    await viewsRepository.rebuildTexts(db, projectId, rowIds);
  },

  /**
   * Brings row `rowId`'s stored text up to date after its cells of `endpointIds` changed (in the
   * caller's transaction, which holds the row's lock): only those cells are read and replaced in
   * the stored array, the same text `rebuild` writes (issue 20: a fold's rebuild probed a cell for
   * every column, 14,000 buffers a call at 300 columns). Rebuilt instead when the row has no text,
   * its text was built for other columns, or an endpoint is not a column.
   */
  async patch(db: Queryable, projectId: string, rowId: string, endpointIds: readonly string[]): Promise<void> {
    if (endpointIds.length === 0) return;
    const inputs = await viewsRepository.patchInputs(db, projectId, rowId, endpointIds);
    if (inputs === undefined) return;
    if (
      inputs.cellsJson === null ||
      inputs.total === null ||
      inputs.cellsColumns !== inputs.total ||
      inputs.cells.length !== new Set(endpointIds).size
    ) {
      await this.rebuild(db, projectId, [rowId]);
      return;
    }
    // Every cell is a flat object, written as JSON.stringify writes it: parsing and writing the
    // array again gives back the stored text, with the changed cells in their places.
    const cells = JSON.parse(inputs.cellsJson) as unknown[];
    for (const [ordinal, cell] of inputs.cells) cells[ordinal] = JSON.parse(cell) as unknown;
    await viewsRepository.writeTexts(db, [{ id: rowId, cells: JSON.stringify(cells) }], inputs.total);
  },

  /**
   * Inserts an `N/A` column for each endpoint just documented (`newEndpointIds`, documented in this
   * transaction) into the stored texts of `rowIds` (locked by the caller, none of them with a cell
   * of those endpoints): a splice of the stored arrays, with no join of rows × endpoints. Returns
   * the rows whose text was not built for the columns before these, to be rebuilt instead; rows
   * without text stay without (all `N/A`).
   */
  async insertNotSeenColumns(
    db: Queryable,
    projectId: string,
    rowIds: readonly string[],
    newEndpointIds: readonly string[],
  ): Promise<string[]> {
    const positions = await viewsRepository.columnPositions(db, projectId, newEndpointIds);
    const total = positions[0]?.total;
    if (total === undefined) return [];
    const before = total - positions.length;
    const notSeen = JSON.parse(NOT_SEEN_JSON) as unknown;
    const stale: string[] = [];
    for (let start = 0; start < rowIds.length; start += INSERT_CHUNK_ROWS) {
      const chunk = rowIds.slice(start, start + INSERT_CHUNK_ROWS);
      const stored = await viewsRepository.storedTexts(db, chunk);
      const spliced: Array<{ id: string; cells: string }> = [];
      for (const row of stored) {
        if (row.cellsJson === null) continue;
        if (row.cellsColumns !== before) {
          stale.push(row.id);
          continue;
        }
        const cells = JSON.parse(row.cellsJson) as unknown[];
        // Ascending final positions: each insertion lands where it ends up.
        for (const { ordinal } of positions) cells.splice(ordinal, 0, notSeen);
        spliced.push({ id: row.id, cells: JSON.stringify(cells) });
      }
      if (spliced.length === 0) continue;
      await viewsRepository.writeTexts(db, spliced, total);
    }
    return stale;
  },
};
