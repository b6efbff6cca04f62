import type { ChangeKind, ParameterLocation, ParametersDoc } from '../api/types';
import type { Shape } from '../shape/types';

export type Direction = 'request' | 'response';

/** One difference between documented and observed behaviour. */
export interface ShapeChange {
  change: ChangeKind;
  /** A body (`request`, `response`), or a query parameter / request header (`at` is then its name). */
  in: Direction | ParameterLocation;
  status?: number;
  /** JSON path, `$` for the body, `$.a.b`, `$.items[]` for array items; a parameter's name. */
  at: string;
  documented?: Shape;
  observed?: Shape;
  /** For `new content type`: the media types (without parameters) documented and observed; null for no body. */
  contentTypes?: { documented: string | null; observed: string | null };
  breaking: boolean;
}

/** What an endpoint looks like: its request body, its responses per status code, and its request parameters. */
export interface EndpointShapes {
  /** `null`: no request body documented/observed. `shape: null`: a body whose shape is not recorded (non-JSON). */
  request: { contentType: string; shape: Shape | null } | null;
  responses: Array<{ status: number; contentType: string | null; shape: Shape | null }>;
  /**
   * Query parameter and request header names. Absent (or null, as stored): not documented, never
   * compared; so versions written before parameters were documented behave as they always did.
   * Observed: `required` when every exchange compared sent the name.
   */
  parameters?: ParametersDoc | null;
}
