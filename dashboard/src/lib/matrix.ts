import {
  type CellRuntime,
  type EnvironmentKind,
  NOT_SEEN_VERSION,
  type VersionCell,
  type VersionMatrixResponse,
  type VersionMatrixRow,
} from '@spectator/shared';

const notSeen: VersionCell = { version: NOT_SEEN_VERSION };

/**
 * Appends a further page of the versions matrix to the rows already shown. Columns are matched by
 * endpoint id, so a page that knows an endpoint more (documented meanwhile) adds its column, and
 * rows that never saw it read `N/A` there.
 */
export function mergeMatrixPages(first: VersionMatrixResponse, next: VersionMatrixResponse): VersionMatrixResponse {
  const endpoints = [...first.endpoints];
  const columnOf = new Map(endpoints.map((endpoint, index) => [endpoint.id, index]));
  for (const endpoint of next.endpoints) {
    if (!columnOf.has(endpoint.id)) {
      columnOf.set(endpoint.id, endpoints.length);
      endpoints.push(endpoint);
    }
  }
  const widen = (cells: VersionCell[]) => [
    ...cells,
    ...Array.from({ length: endpoints.length - cells.length }, () => notSeen),
  ];
  const nextCells = next.cells.map((cells) => {
    const aligned: VersionCell[] = Array.from({ length: endpoints.length }, () => notSeen);
    next.endpoints.forEach((endpoint, index) => (aligned[columnOf.get(endpoint.id)!] = cells[index] ?? notSeen));
    return aligned;
  });
  const nextRuntime = next.runtime.map((cells) =>
    cells
      .map((cell) => ({ ...cell, column: columnOf.get(next.endpoints[cell.column]!.id)! }))
      .sort((a, b) => a.column - b.column),
  );
  return {
    endpoints,
    rows: [...first.rows, ...next.rows],
    cells: [...first.cells.map(widen), ...nextCells],
    runtime: [...first.runtime, ...nextRuntime],
    nextCursor: next.nextCursor,
  };
}

export interface MatrixView {
  endpoints: VersionMatrixResponse['endpoints'];
  /** `runtime[i]`: the runtime beside `cells[i]`, null where the row has none for that endpoint. */
  rows: Array<{ row: VersionMatrixRow; cells: VersionCell[]; runtime: Array<CellRuntime | null> }>;
}

/**
 * The part of the matrix to show: rows of one environment kind (all when `kind` is undefined) and
 * endpoint columns whose `METHOD path` contains `endpointFilter` (case-insensitive).
 */
export function viewMatrix(
  matrix: VersionMatrixResponse,
  kind: EnvironmentKind | undefined,
  endpointFilter: string,
): MatrixView {
  const needle = endpointFilter.trim().toLowerCase();
  const columns = matrix.endpoints.flatMap((endpoint, index) =>
    !needle || `${endpoint.method} ${endpoint.path}`.toLowerCase().includes(needle) ? [index] : [],
  );
  return {
    endpoints: columns.map((index) => matrix.endpoints[index]!),
    rows: matrix.rows.flatMap((row, rowIndex) => {
      if (kind && row.kind !== kind) return [];
      const runtime = new Map((matrix.runtime[rowIndex] ?? []).map((cell) => [cell.column, cell]));
      return [
        {
          row,
          cells: columns.map((index) => matrix.cells[rowIndex]?.[index] ?? notSeen),
          runtime: columns.map((index) => runtime.get(index) ?? null),
        },
      ];
    }),
  };
}
