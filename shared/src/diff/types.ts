import type { ChangeKind } from '../api/types';
import type { Shape } from '../shape/types';

export type Direction = 'request' | 'response';

/** One difference between documented and observed behaviour. */
export interface ShapeChange {
  change: ChangeKind;
  in: Direction;
  status?: number;
  /** JSON path, `$` for the body, `$.a.b`, `$.items[]` for array items. */
  at: string;
  documented?: Shape;
  observed?: Shape;
  /** For `new content type`: the media types (without parameters) documented and observed; null for no body. */
  contentTypes?: { documented: string | null; observed: string | null };
  breaking: boolean;
}

/** What an endpoint looks like: its request body and its responses per status code. */
export interface EndpointShapes {
  /** `null`: no request body documented/observed. `shape: null`: a body whose shape is not recorded (non-JSON). */
  request: { contentType: string; shape: Shape | null } | null;
  responses: Array<{ status: number; contentType: string | null; shape: Shape | null }>;
}
