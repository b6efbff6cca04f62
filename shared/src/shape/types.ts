/**
 * A shape is the structure of a JSON body: field names and types, never values.
 *
 * Shapes are plain JSON-serialisable data so they travel unchanged between the agent, the backend
 * and the dashboard. Object fields are kept as an array sorted by name (not a record) so that a
 * shape has one canonical layout and no field name can collide with `Object.prototype`.
 */
export type StringFormat = 'uuid' | 'date-time' | 'date' | 'email' | 'uri' | 'binary';

/**
 * Every format hint. All but `binary` are detected from a string's text; `binary` marks a file
 * part of a `multipart/form-data` body (what OpenAPI calls an upload), never a JSON string.
 */
export const STRING_FORMATS: readonly StringFormat[] = ['uuid', 'date-time', 'date', 'email', 'uri', 'binary'];

export interface StringShape {
  kind: 'string';
  /** A hint about the kind of string seen (never the value). Absent when the strings seen differ. */
  format?: StringFormat;
}
export interface NumberShape {
  kind: 'number';
}
export interface BooleanShape {
  kind: 'boolean';
}
export interface NullShape {
  kind: 'null';
}
export interface Field {
  name: string;
  /** False when the field was missing from some observed bodies. */
  required: boolean;
  shape: Shape;
}
export interface ObjectShape {
  kind: 'object';
  /** Sorted by `name` (code-unit order), unique names. */
  fields: Field[];
  /** Set when the object had more fields than the limit; the extra fields are not described. */
  truncated?: true;
  /**
   * How many objects this shape describes when more than one (the records of a list, several
   * bodies merged), counted up to `REQUIRED_INSTANCES` (6); absent for one. A count, never a
   * value: documentation claims a field `required` only once that many objects all had it.
   */
  instances?: number;
}
export interface ArrayShape {
  kind: 'array';
  /** One shape for all items (the merge of the items seen); `unknown` for an empty array. */
  items: Shape;
  /** Set when only some items were looked at (more items than the limit). */
  truncated?: true;
}
export interface OneOfShape {
  kind: 'oneOf';
  /**
   * At least two options, at most one per kind, never nested `oneOf`, in canonical kind order.
   * `T | null` is how a nullable field reads.
   */
  options: Shape[];
}
export interface UnknownShape {
  kind: 'unknown';
  /** Set when the value was beyond the depth limit rather than genuinely unknown. */
  truncated?: true;
}

export type Shape =
  StringShape | NumberShape | BooleanShape | NullShape | ObjectShape | ArrayShape | OneOfShape | UnknownShape;

export type ShapeKind = Shape['kind'];

/** Limits that keep inference bounded whatever the body. */
export interface ShapeLimits {
  /** Nesting depth beyond which a value becomes `{kind:'unknown', truncated:true}`. */
  maxDepth: number;
  /** Fields per object beyond which the object is marked truncated. */
  maxFields: number;
  /** Array items looked at; beyond this the array is marked truncated. */
  maxItems: number;
}
