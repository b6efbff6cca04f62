import type { JsonSchema } from '../api/types';
import { inferShape, MAX_SHAPE_DEPTH } from './infer';
import { mergeAllShapes } from './merge';
import { compareNames } from './options';
import type { Field, Shape } from './types';
import { STRING_FORMATS } from './types';

const TRUNCATED = 'x-spectator-truncated';

/**
 * A shape written as JSON Schema 2020-12 (the dialect of OpenAPI 3.1), using only `type`,
 * `properties`, `required`, `additionalProperties`, `items`, `oneOf` and `format`:
 * - objects are closed (`additionalProperties: false`), as conformance is closed; a truncated
 *   object (fields beyond the limit not described) is left open and marked `x-spectator-truncated`;
 * - `required` lists the required fields and is left out when there are none;
 * - `T | null` is written as `oneOf: [T, {type: 'null'}]`;
 * - `unknown` is `{}` (anything), with `x-spectator-truncated: true` when a limit cut it.
 */
export function toJsonSchema(shape: Shape): JsonSchema {
  switch (shape.kind) {
    case 'string':
      return shape.format === undefined ? { type: 'string' } : { type: 'string', format: shape.format };
    case 'number':
    case 'boolean':
    case 'null':
      return { type: shape.kind };
    case 'unknown':
      return shape.truncated ? { [TRUNCATED]: true } : {};
    case 'array':
      return shape.truncated
        ? { type: 'array', items: toJsonSchema(shape.items), [TRUNCATED]: true }
        : { type: 'array', items: toJsonSchema(shape.items) };
    case 'oneOf':
      return { oneOf: shape.options.map(toJsonSchema) };
    case 'object': {
      // fromEntries defines own properties, so a field named `__proto__` stays a field.
      const schema: JsonSchema = {
        type: 'object',
        properties: Object.fromEntries(shape.fields.map((field) => [field.name, toJsonSchema(field.shape)])),
      };
      const required = shape.fields.filter((field) => field.required).map((field) => field.name);
      if (required.length > 0) schema.required = required;
      if (shape.truncated) schema[TRUNCATED] = true;
      else schema.additionalProperties = false;
      return schema;
    }
  }
}

/** A schema that {@link fromJsonSchema} cannot read: names the keyword and where it is (a JSON Pointer). */
export class InvalidSchemaError extends Error {
  override readonly name = 'InvalidSchemaError';

  constructor(
    readonly keyword: string,
    readonly at: string,
    problem: string,
  ) {
    super(`fromJsonSchema: ${problem} (keyword "${keyword}" at ${at})`);
  }
}

/** Keywords that describe values, not structure: accepted and ignored. */
const IGNORED_KEYWORDS = new Set([
  '$schema',
  '$id',
  '$comment',
  'title',
  'description',
  'examples',
  'example',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'contentMediaType',
  'contentEncoding',
]);
const STRUCTURE_KEYWORDS = new Set([
  'type',
  'format',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'oneOf',
  'anyOf',
  'enum',
  'const',
  'nullable',
  TRUNCATED,
]);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);

/**
 * A planned shape given as JSON Schema (design first) read back as a shape. Reads what
 * {@link toJsonSchema} writes and the usual hand-written forms: `type` as a string or a list
 * (`["string", "null"]`), `integer` as number, `anyOf` like `oneOf` (options merged into one
 * shape), `enum`/`const` by the types of their values, OpenAPI 3.0 `nullable`, the boolean schema
 * `true`. An object without `additionalProperties` is closed like every documented shape;
 * `additionalProperties: true` leaves it open (a truncated shape). Formats other than uuid,
 * date-time, date, email and uri are dropped (they are hints); value constraints and annotations
 * are ignored. Anything else (`$ref`, `allOf`, `not`, `prefixItems`, …) and every malformed value
 * throws an {@link InvalidSchemaError} naming the keyword and its JSON Pointer.
 */
export function fromJsonSchema(schema: unknown): Shape {
  return readSchema(schema, '#', 0);
}

function readSchema(schema: unknown, at: string, depth: number): Shape {
  if (depth > MAX_SHAPE_DEPTH)
    throw new InvalidSchemaError('type', at, `schema nested deeper than ${MAX_SHAPE_DEPTH} levels`);
  if (schema === true) return { kind: 'unknown' };
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new InvalidSchemaError('type', at, `a schema must be an object or true, got ${describeValue(schema)}`);
  }
  const record = schema as Record<string, unknown>;
  for (const keyword of Object.keys(record)) {
    if (!STRUCTURE_KEYWORDS.has(keyword) && !IGNORED_KEYWORDS.has(keyword) && !keyword.startsWith('x-')) {
      throw new InvalidSchemaError(keyword, at, `unsupported keyword "${keyword}"`);
    }
  }
  const has = (keyword: string): boolean => Object.prototype.hasOwnProperty.call(record, keyword);
  const alternatives = has('oneOf') ? 'oneOf' : has('anyOf') ? 'anyOf' : null;
  const shapes: Shape[] = [];
  if (alternatives !== null) {
    if (has('oneOf') && has('anyOf'))
      throw new InvalidSchemaError('anyOf', at, 'oneOf and anyOf together are not supported');
    if (has('type'))
      throw new InvalidSchemaError(alternatives, at, `${alternatives} together with type is not supported`);
    const options = record[alternatives];
    if (!Array.isArray(options) || options.length === 0)
      throw new InvalidSchemaError(alternatives, at, `${alternatives} must be a non-empty array of schemas`);
    options.forEach((option, index) => shapes.push(readSchema(option, `${at}/${alternatives}/${index}`, depth + 1)));
  }
  for (const keyword of ['enum', 'const'] as const) {
    if (!has(keyword)) continue;
    const values = keyword === 'enum' ? record.enum : [record.const];
    if (!Array.isArray(values) || values.length === 0)
      throw new InvalidSchemaError(keyword, at, 'enum must be a non-empty array');
    // Only the types of the listed values matter, never the values.
    if (!has('type')) shapes.push(...values.map((value) => inferShape(value)));
  }
  for (const type of declaredTypes(record, at, has)) shapes.push(readTyped(type, record, at, depth, has));
  if (has('nullable')) {
    if (typeof record.nullable !== 'boolean')
      throw new InvalidSchemaError('nullable', at, `nullable must be a boolean, got ${describeValue(record.nullable)}`);
    if (record.nullable) shapes.push({ kind: 'null' });
  }
  if (shapes.length === 0)
    return readTruncated(record, at) ? { kind: 'unknown', truncated: true } : { kind: 'unknown' };
  return mergeAllShapes(shapes);
}

/** The types a schema declares, or the one its keywords imply when `type` is absent. */
function declaredTypes(record: Record<string, unknown>, at: string, has: (keyword: string) => boolean): string[] {
  if (!has('type')) {
    if (has('properties') || has('required') || has('additionalProperties')) return ['object'];
    if (has('items')) return ['array'];
    if (has('format')) return ['string'];
    return [];
  }
  const type = record.type;
  const types = Array.isArray(type) ? type : [type];
  if (types.length === 0) throw new InvalidSchemaError('type', `${at}/type`, 'type must name at least one type');
  for (const name of types) {
    if (typeof name !== 'string' || !TYPES.has(name)) {
      throw new InvalidSchemaError(
        'type',
        `${at}/type`,
        `unknown type ${describeValue(name)} (expected one of ${[...TYPES].join(', ')})`,
      );
    }
  }
  return types as string[];
}

function readTyped(
  type: string,
  record: Record<string, unknown>,
  at: string,
  depth: number,
  has: (keyword: string) => boolean,
): Shape {
  switch (type) {
    case 'string': {
      if (!has('format')) return { kind: 'string' };
      if (typeof record.format !== 'string')
        throw new InvalidSchemaError(
          'format',
          `${at}/format`,
          `format must be a string, got ${describeValue(record.format)}`,
        );
      const format = STRING_FORMATS.find((known) => known === record.format);
      return format === undefined ? { kind: 'string' } : { kind: 'string', format };
    }
    case 'number':
    case 'integer':
      return { kind: 'number' };
    case 'boolean':
      return { kind: 'boolean' };
    case 'null':
      return { kind: 'null' };
    case 'array': {
      const items: Shape = has('items') ? readItems(record.items, `${at}/items`, depth) : { kind: 'unknown' };
      return readTruncated(record, at) ? { kind: 'array', items, truncated: true } : { kind: 'array', items };
    }
    default:
      return readObject(record, at, depth, has);
  }
}

function readItems(items: unknown, at: string, depth: number): Shape {
  if (Array.isArray(items))
    throw new InvalidSchemaError('items', at, 'tuple items (an array of schemas) are not supported');
  return readSchema(items, at, depth + 1);
}

function readObject(
  record: Record<string, unknown>,
  at: string,
  depth: number,
  has: (keyword: string) => boolean,
): Shape {
  const properties = has('properties') ? record.properties : {};
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) {
    throw new InvalidSchemaError(
      'properties',
      `${at}/properties`,
      `properties must be an object, got ${describeValue(properties)}`,
    );
  }
  const required = has('required') ? record.required : [];
  if (!Array.isArray(required) || !required.every((name): name is string => typeof name === 'string')) {
    throw new InvalidSchemaError('required', `${at}/required`, 'required must be an array of field names');
  }
  const names = Object.keys(properties);
  for (const name of required) {
    if (!names.includes(name))
      throw new InvalidSchemaError(
        'required',
        `${at}/required`,
        `required names "${name}", which is not in properties`,
      );
  }
  let open = readTruncated(record, at);
  if (has('additionalProperties')) {
    const additional = record.additionalProperties;
    if (typeof additional === 'boolean') open ||= additional;
    else if (isEmptySchema(additional)) open = true;
    else
      throw new InvalidSchemaError(
        'additionalProperties',
        `${at}/additionalProperties`,
        'additionalProperties must be a boolean (a schema for extra fields is not supported)',
      );
  }
  const requiredNames = new Set(required);
  const fields: Field[] = names.sort(compareNames).map((name) => ({
    name,
    required: requiredNames.has(name),
    shape: readSchema(
      (properties as Record<string, unknown>)[name],
      `${at}/properties/${escapePointer(name)}`,
      depth + 1,
    ),
  }));
  return open ? { kind: 'object', fields, truncated: true } : { kind: 'object', fields };
}

function readTruncated(record: Record<string, unknown>, at: string): boolean {
  const truncated = record[TRUNCATED];
  if (truncated === undefined) return false;
  if (typeof truncated !== 'boolean')
    throw new InvalidSchemaError(
      TRUNCATED,
      `${at}/${TRUNCATED}`,
      `${TRUNCATED} must be a boolean, got ${describeValue(truncated)}`,
    );
  return truncated;
}

function isEmptySchema(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

/** RFC 6901: `~` → `~0`, `/` → `~1`. */
function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}
