import type { JsonSchema } from '../api/types';
import type { Shape } from './types';

/** A shape written as JSON Schema 2020-12 (OpenAPI 3.1 dialect). */
export function toJsonSchema(_shape: Shape): JsonSchema {
  throw new Error('toJsonSchema: not implemented yet');
}

/** A planned shape given as JSON Schema (design first) read back as a shape; throws naming the bad keyword. */
export function fromJsonSchema(_schema: unknown): Shape {
  throw new Error('fromJsonSchema: not implemented yet');
}
