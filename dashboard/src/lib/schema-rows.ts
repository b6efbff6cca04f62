import type { JsonSchema } from '@spectator/shared';

/** One line of a shape as the dashboard shows it: a field, its type and its markers. Never a value. */
export interface SchemaRow {
  /** JSON path of the field (`$.author`, `$.items[].id`, `$` for the body itself); unique per shape. */
  path: string;
  /** Nesting level, 0 for the fields of the body. */
  depth: number;
  /** Field name; `(body)` for a body that is not an object. */
  name: string;
  /** Readable type, e.g. `String`, `Number`, `Array of Object`, `String | Number`. */
  type: string;
  /** The field was missing from some observed bodies (not in `required`). */
  optional: boolean;
  /** `null` was seen besides the type (`oneOf` with `null`). */
  nullable: boolean;
  /** A string format hint such as `uuid` or `date-time`. */
  format?: string;
  /** The shape was cut short here by a limit of the agent. */
  truncated: boolean;
}

const TYPE_NAMES: Record<NonNullable<JsonSchema['type']>, string> = {
  string: 'String',
  number: 'Number',
  integer: 'Integer',
  boolean: 'Boolean',
  null: 'Null',
  object: 'Object',
  array: 'Array',
};

/** The options of a schema other than `null`, and whether `null` was one of them. */
function splitNullable(schema: JsonSchema): { options: JsonSchema[]; nullable: boolean } {
  if (schema.oneOf) {
    const options = schema.oneOf.filter((option) => option.type !== 'null');
    return { options, nullable: options.length < schema.oneOf.length };
  }
  return { options: [schema], nullable: false };
}

/** The readable type of a schema, nullability left out (it is shown as a marker). */
export function schemaTypeLabel(schema: JsonSchema): string {
  const { options, nullable } = splitNullable(schema);
  if (options.length === 0) return nullable ? 'Null' : 'Unknown';
  return options.map(singleTypeLabel).join(' | ');
}

function singleTypeLabel(schema: JsonSchema): string {
  if (schema.oneOf) return schemaTypeLabel(schema);
  if (!schema.type) return 'Unknown';
  if (schema.type === 'array') return schema.items ? `Array of ${schemaTypeLabel(schema.items)}` : 'Array';
  return TYPE_NAMES[schema.type] ?? schema.type;
}

/** The object schemas whose fields are shown under a field of this schema (through arrays and oneOf). */
function nestedObjects(schema: JsonSchema, path: string): Array<{ schema: JsonSchema; path: string }> {
  const { options } = splitNullable(schema);
  return options.flatMap((option) => {
    if (option.type === 'object' && option.properties) return [{ schema: option, path }];
    if (option.type === 'array' && option.items) return nestedObjects(option.items, `${path}[]`);
    return [];
  });
}

function fieldPath(parent: string, name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `${parent}.${name}` : `${parent}[${JSON.stringify(name)}]`;
}

function rowFor(schema: JsonSchema, name: string, path: string, depth: number, optional: boolean): SchemaRow {
  const { options, nullable } = splitNullable(schema);
  const format = options.find((option) => option.format)?.format;
  const truncated = options.some(
    (option) => option['x-spectator-truncated'] === true || option.items?.['x-spectator-truncated'] === true,
  );
  return {
    path,
    depth,
    name,
    type: schemaTypeLabel(schema),
    optional,
    nullable,
    ...(format ? { format } : {}),
    truncated,
  };
}

function fieldRows(object: JsonSchema, path: string, depth: number, out: SchemaRow[]): void {
  const required = new Set(object.required ?? []);
  const names = Object.keys(object.properties ?? {}).sort();
  for (const name of names) {
    const field = object.properties![name]!;
    const childPath = fieldPath(path, name);
    out.push(rowFor(field, name, childPath, depth, !required.has(name)));
    for (const nested of nestedObjects(field, childPath)) fieldRows(nested.schema, nested.path, depth + 1, out);
  }
}

/**
 * Flattens a JSON Schema (2020-12, as the management API writes shapes) into rows to show as a
 * tree table: an object body lists its fields at depth 0; any other body gets one `(body)` row
 * with its fields below. Fields are sorted by name so the same shape always reads the same.
 */
export function schemaRows(schema: JsonSchema | null | undefined): SchemaRow[] {
  if (!schema) return [];
  const rows: SchemaRow[] = [];
  const { options, nullable } = splitNullable(schema);
  const plainObject = !nullable && options.length === 1 && options[0]!.type === 'object';
  if (plainObject) {
    fieldRows(options[0]!, '$', 0, rows);
    if (options[0]!['x-spectator-truncated'])
      rows.push({ ...rowFor(options[0]!, '…', '$…', 0, false), type: 'more fields not described', truncated: true });
    return rows;
  }
  rows.push(rowFor(schema, '(body)', '$', 0, false));
  for (const nested of nestedObjects(schema, '$')) fieldRows(nested.schema, nested.path, 1, rows);
  return rows;
}
