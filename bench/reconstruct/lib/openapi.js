// @ts-check
// Reading OpenAPI 3.0/3.1 documents for the reconstruction bench: operations with their resolved
// parameters, bodies and responses, path templates reduced to their positions, and schemas
// flattened to the JSON paths of their fields. Used on the source documents and on every
// contender's output alike, so both sides are read by one piece of code.

/** @typedef {Record<string, any>} Doc an OpenAPI document (parsed JSON) */

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/**
 * The node a local `$ref` (`#/components/schemas/Pet`) points to, or undefined.
 * @param {Doc} doc
 * @param {string} ref
 * @returns {any}
 */
function resolvePointer(doc, ref) {
  if (!ref.startsWith('#')) return undefined;
  /** @type {any} */
  let node = doc;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) return undefined;
    node = node[key];
  }
  return node;
}

/**
 * Follows `$ref`s until a node without one (at most 20 hops; a loop or a dangling ref gives undefined).
 * @param {Doc} doc
 * @param {any} node
 * @returns {any}
 */
function deref(doc, node) {
  let current = node;
  for (let hops = 0; hops < 20; hops++) {
    if (current === null || typeof current !== 'object' || typeof current.$ref !== 'string') return current;
    current = resolvePointer(doc, current.$ref);
  }
  return undefined;
}

/**
 * A path reduced to its positions: trailing and doubled slashes dropped, every `{name}` written `{}`.
 * `/repos/{owner}/{repo}/` and `/repos/{o}/{r}` give the same key; `/files/{id}.json` keeps its literal part.
 * @param {string} path
 * @returns {string}
 */
function templateKey(path) {
  const segments = (path.split('?')[0] ?? '')
    .split('/')
    .filter((segment) => segment !== '')
    .map((segment) => segment.replace(/\{[^}]*\}/g, '{}'));
  return `/${segments.join('/')}`;
}

/**
 * True when `key` (a template key) is an instance of `pattern`: as many segments, each literal of
 * `pattern` equal, each `{}` of `pattern` taken by anything. An exact key is an instance too.
 * @param {string} key
 * @param {string} pattern
 * @returns {boolean}
 */
function isInstanceOf(key, pattern) {
  const a = key.split('/');
  const b = pattern.split('/');
  if (a.length !== b.length) return false;
  return b.every((segment, index) => segment === '{}' || segment === a[index]);
}

/**
 * @typedef {object} Operation
 * @property {string} method upper case
 * @property {string} path as the document writes it
 * @property {string} key templateKey(path)
 * @property {any} operation the operation object
 * @property {any[]} parameters resolved, path item's overridden by the operation's (by name and in)
 * @property {any} requestBody resolved, or undefined
 * @property {Map<string, any>} responses resolved, by status as written (`200`, `default`, `4XX`)
 */

/**
 * The operations of a document, in document order.
 * @param {Doc} doc
 * @returns {Operation[]}
 */
function listOperations(doc) {
  /** @type {Operation[]} */
  const operations = [];
  for (const [path, rawItem] of Object.entries(doc.paths ?? {})) {
    const item = deref(doc, rawItem);
    if (!item || typeof item !== 'object') continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation || typeof operation !== 'object') continue;
      /** @type {Map<string, any>} */
      const byKey = new Map();
      for (const raw of [...(item.parameters ?? []), ...(operation.parameters ?? [])]) {
        const parameter = deref(doc, raw);
        if (parameter && typeof parameter.name === 'string') byKey.set(`${parameter.in}:${parameter.name}`, parameter);
      }
      /** @type {Map<string, any>} */
      const responses = new Map();
      for (const [status, response] of Object.entries(operation.responses ?? {}))
        responses.set(String(status), deref(doc, response));
      operations.push({
        method: method.toUpperCase(),
        path,
        key: templateKey(path),
        operation,
        parameters: [...byKey.values()],
        requestBody: deref(doc, operation.requestBody),
        responses,
      });
    }
  }
  return operations;
}

/**
 * The JSON media type of a `content` map and its schema: `application/json` first, then any
 * `…/…+json` or `…/json…`; undefined when there is none.
 * @param {any} content
 * @returns {{ mediaType: string, schema: any } | undefined}
 */
function jsonContent(content) {
  if (!content || typeof content !== 'object') return undefined;
  const types = Object.keys(content);
  const chosen =
    types.find((type) => type.split(';')[0]?.trim().toLowerCase() === 'application/json') ??
    types.find((type) => /[/+]json\b/i.test(type));
  return chosen === undefined ? undefined : { mediaType: chosen, schema: content[chosen]?.schema };
}

/**
 * Numeric statuses of an operation's responses (`default`, `2XX` left out), ascending.
 * @param {Map<string, any> | Record<string, any>} responses
 * @returns {number[]}
 */
function numericStatuses(responses) {
  const keys = responses instanceof Map ? [...responses.keys()] : Object.keys(responses ?? {});
  return keys
    .filter((status) => /^[1-5]\d\d$/.test(status))
    .map(Number)
    .sort((a, b) => a - b);
}

/**
 * @typedef {object} Field
 * @property {Set<string>} types JSON types the schema allows here (`integer` written `number`); empty: any
 * @property {boolean} nullable
 * @property {boolean} required listed in its parent object's `required`
 */

/** How deep flattening goes: a field deeper than this many steps is not counted. */
const MAX_DEPTH = 8;

/**
 * The fields of a schema as JSON paths: `name`, `owner.login`, `tags[]`, `[].id` (an array at the
 * root), with their types and whether they are required. `$ref`s are followed (a recursion stops
 * where it recurs), `allOf` merged, `oneOf`/`anyOf` united (required only where every branch
 * requires it); maps (`additionalProperties`) have no named fields. The root itself is not a field.
 * @param {Doc} doc the document the schema's `$ref`s point into
 * @param {any} schema
 * @returns {Map<string, Field>}
 */
function flattenSchema(doc, schema) {
  /** @type {Map<string, Field>} */
  const fields = new Map();
  visitSchema(doc, schema, '', fields, [], 0);
  return fields;
}

/**
 * @param {string} prefix
 * @param {string} name
 * @returns {string}
 */
function childPath(prefix, name) {
  return prefix === '' ? name : `${prefix}.${name}`;
}

/**
 * The JSON types a schema allows at its own level (not its branches'), `integer` as `number`.
 * @param {any} schema
 * @returns {{ types: Set<string>, nullable: boolean }}
 */
function ownTypes(schema) {
  /** @type {Set<string>} */
  const types = new Set();
  let nullable = schema.nullable === true;
  const declared = Array.isArray(schema.type) ? schema.type : typeof schema.type === 'string' ? [schema.type] : [];
  for (const type of declared) {
    if (type === 'null') nullable = true;
    else types.add(type === 'integer' ? 'number' : String(type));
  }
  if (declared.length === 0) {
    if (schema.properties) types.add('object');
    else if (schema.items) types.add('array');
    else if (Array.isArray(schema.enum)) {
      for (const value of schema.enum) {
        if (value === null) nullable = true;
        else types.add(valueType(value));
      }
    } else if ('const' in schema) {
      if (schema.const === null) nullable = true;
      else types.add(valueType(schema.const));
    }
  }
  return { types, nullable };
}

/**
 * The JSON types a schema allows at its own level and in its `oneOf`, `anyOf` and `allOf`
 * branches (`oneOf: [{ type: 'string' }, { type: 'null' }]`, how OpenAPI 3.1 may write a nullable
 * string, allows a string and null).
 * @param {Doc} doc
 * @param {any} schema
 * @param {string[]} refs the `$ref`s being expanded (a recursion stops where one repeats)
 * @returns {{ types: Set<string>, nullable: boolean }}
 */
function allTypes(doc, schema, refs) {
  const result = ownTypes(schema);
  for (const keyword of ['oneOf', 'anyOf', 'allOf']) {
    if (!Array.isArray(schema[keyword])) continue;
    for (const branch of schema[keyword]) {
      const ref = typeof branch?.$ref === 'string' ? String(branch.$ref) : null;
      if (ref !== null && refs.includes(ref)) continue;
      const resolved = ref === null ? branch : resolvePointer(doc, ref);
      if (resolved === null || typeof resolved !== 'object') continue;
      const inner = allTypes(doc, resolved, ref === null ? refs : [...refs, ref]);
      for (const type of inner.types) result.types.add(type);
      result.nullable ||= inner.nullable;
    }
  }
  return result;
}

/**
 * @param {unknown} value
 * @returns {string} the JSON type of a value: object, array, string, number, boolean, null
 */
function valueType(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' || typeof value === 'bigint'
    ? 'number'
    : typeof value === 'object'
      ? 'object'
      : typeof value;
}

/**
 * Adds a field, merging with one already there (types united; required if either says so, as
 * `allOf` parts that both define it would).
 * @param {Map<string, Field>} fields
 * @param {string} path
 * @param {Field} field
 */
function addField(fields, path, field) {
  const existing = fields.get(path);
  if (!existing) {
    fields.set(path, { types: new Set(field.types), nullable: field.nullable, required: field.required });
    return;
  }
  for (const type of field.types) existing.types.add(type);
  existing.nullable ||= field.nullable;
  existing.required ||= field.required;
}

/**
 * @param {Doc} doc
 * @param {any} raw
 * @param {string} prefix path of the value this schema describes ('' for the root)
 * @param {Map<string, Field>} fields
 * @param {string[]} refs the `$ref`s being expanded (a recursion stops where one repeats)
 * @param {number} depth
 */
function visitSchema(doc, raw, prefix, fields, refs, depth) {
  if (depth > MAX_DEPTH || raw === null || typeof raw !== 'object') return;
  if (typeof raw.$ref === 'string') {
    if (refs.includes(raw.$ref)) return;
    visitSchema(doc, resolvePointer(doc, raw.$ref), prefix, fields, [...refs, raw.$ref], depth);
    return;
  }
  const schema = raw;
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf) visitSchema(doc, part, prefix, fields, refs, depth);
  }
  for (const keyword of ['oneOf', 'anyOf']) {
    if (!Array.isArray(schema[keyword])) continue;
    /** @type {Map<string, Field>[]} */
    const branches = schema[keyword].map((/** @type {any} */ branch) => {
      /** @type {Map<string, Field>} */
      const own = new Map();
      visitSchema(doc, branch, prefix, own, refs, depth);
      return own;
    });
    // Branches that define no field (`{ type: 'null' }` beside an object: how OpenAPI 3.1 may write
    // a nullable object) leave the object's own required fields required.
    const defining = branches.filter((branch) => branch.size > 0);
    for (const branch of branches) {
      for (const [path, field] of branch) {
        const everywhere = defining.every((other) => other.get(path)?.required === true);
        addField(fields, path, { ...field, required: everywhere });
      }
    }
  }
  if (prefix !== '') {
    const { types, nullable } = allTypes(doc, schema, refs);
    const existing = fields.get(prefix);
    if (existing) {
      for (const type of types) existing.types.add(type);
      existing.nullable ||= nullable;
    }
  }
  // Fields as deep as flattenValue reads them (MAX_DEPTH segments), no deeper: one level more
  // here counted every deeper field a contender documents as made up and every deeper source
  // field as never shown.
  if (depth >= MAX_DEPTH) return;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  if (schema.properties && typeof schema.properties === 'object') {
    for (const [name, property] of Object.entries(schema.properties)) {
      const path = childPath(prefix, name);
      const resolved = deref(doc, property) ?? {};
      addField(fields, path, { ...ownTypes(resolved), required: required.has(name) });
      visitSchema(doc, property, path, fields, refs, depth + 1);
    }
  }
  // `required` names properties wherever they are defined: here, or in `allOf` parts beside it.
  for (const name of required) {
    const field = fields.get(childPath(prefix, String(name)));
    if (field) field.required = true;
  }
  // Items of any kind (`items: {}`, what an array only ever seen empty documents) are no field.
  const items = schema.items && typeof schema.items === 'object' && !Array.isArray(schema.items) ? schema.items : null;
  if (items !== null && Object.keys(deref(doc, items) ?? {}).length > 0) {
    const path = `${prefix}[]`;
    const resolved = deref(doc, items) ?? {};
    addField(fields, path, { ...ownTypes(resolved), required: false });
    visitSchema(doc, items, path, fields, refs, depth + 1);
  }
}

/**
 * The fields a JSON value shows, as flattenSchema writes them (array items merged under `[]`).
 * @param {unknown} value
 * @returns {Map<string, Set<string>>} path → JSON types seen there (`null` included)
 */
function flattenValue(value) {
  /** @type {Map<string, Set<string>>} */
  const fields = new Map();
  /**
   * @param {unknown} node
   * @param {string} prefix
   * @param {number} depth
   */
  const visit = (node, prefix, depth) => {
    if (depth > MAX_DEPTH) return;
    if (prefix !== '') {
      const types = fields.get(prefix) ?? new Set();
      types.add(valueType(node));
      fields.set(prefix, types);
    }
    if (Array.isArray(node)) {
      for (const item of node) visit(item, `${prefix}[]`, depth + 1);
    } else if (node !== null && typeof node === 'object') {
      for (const [name, child] of Object.entries(node)) visit(child, childPath(prefix, name), depth + 1);
    }
  };
  visit(value, '', 0);
  return fields;
}

/**
 * A copy of a schema with its local `$ref`s written in place (for a generator that does not
 * follow them). A recursion is cut where it repeats (the schema becomes `{}` there);
 * `example`/`examples`, `xml` and `discriminator` are dropped.
 * @param {Doc} doc
 * @param {any} schema
 * @param {string[]} [refs]
 * @returns {any}
 */
function inlineSchema(doc, schema, refs = []) {
  if (Array.isArray(schema)) return schema.map((item) => inlineSchema(doc, item, refs));
  if (schema === null || typeof schema !== 'object') return schema;
  if (typeof schema.$ref === 'string') {
    if (refs.includes(schema.$ref) || refs.length > MAX_DEPTH) return {};
    const target = resolvePointer(doc, schema.$ref);
    return target === undefined ? {} : inlineSchema(doc, target, [...refs, schema.$ref]);
  }
  /** @type {Record<string, any>} */
  const copy = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'example' || key === 'examples' || key === 'xml' || key === 'discriminator') continue;
    if (key === 'properties' && value && typeof value === 'object') {
      copy.properties = Object.fromEntries(
        Object.entries(value).map(([name, property]) => [name, inlineSchema(doc, property, refs)]),
      );
    } else copy[key] = inlineSchema(doc, value, refs);
  }
  return copy;
}

/**
 * Can a client send a request on this operation's path? Not when the path holds a `#` (a client sends
 * only what precedes it: mastercard.com/masterpassqr's `/send/#env/v1/…` reaches `/send/`) or a `?`
 * (the query starts there).
 * @param {Operation} operation
 * @returns {boolean}
 */
function requestable(operation) {
  return !/[#?]/.test(operation.path);
}

/**
 * Response headers that frame the message rather than carry the API's data. Documents recorded from
 * real answers list them (nowpayments.io: `Transfer-Encoding`, `Content-Encoding`), and the mock
 * makes up values for them (`Transfer-Encoding: anim`): answers no HTTP client can read.
 */
const FRAMING_HEADERS = new Set([
  'connection',
  'content-encoding',
  'content-length',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * A media type the mock can read (`type/subtype`, parameters aside; RFC 9110's token characters). Some
 * documents name a format instead (opendatasoft.com's `xls`, truora.com's `PDF`): prism's validator throws
 * on such a key outside any request handler, and the whole mock exits, so every later request of the
 * document is answered by nothing.
 */
const MEDIA_TYPE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*(;.*)?$/;

/**
 * A copy of a document for the mock to serve, null when it needs none: without the framing headers its
 * responses define (see FRAMING_HEADERS), and with `application/octet-stream` for a media type that is
 * none (see MEDIA_TYPE; dropped when the body already has that one). The bench scores against the
 * document itself.
 * @param {any} doc
 * @returns {any | null}
 */
function servedCopy(doc) {
  const copy = JSON.parse(JSON.stringify(doc));
  let changed = 0;
  /** @param {any} content a body's media types */
  const mediaTypes = (content) => {
    if (!content || typeof content !== 'object') return;
    for (const type of Object.keys(content))
      if (!MEDIA_TYPE.test(type)) {
        content['application/octet-stream'] ??= content[type];
        delete content[type];
        changed++;
      }
  };
  /** @param {any} response */
  const clean = (response) => {
    mediaTypes(response?.content);
    const headers = response?.headers;
    if (!headers || typeof headers !== 'object') return;
    for (const name of Object.keys(headers))
      if (FRAMING_HEADERS.has(name.toLowerCase())) {
        delete headers[name];
        changed++;
      }
  };
  for (const item of Object.values(copy.paths ?? {}))
    for (const method of METHODS) {
      mediaTypes(item?.[method]?.requestBody?.content);
      for (const response of Object.values(item?.[method]?.responses ?? {})) clean(response);
    }
  for (const response of Object.values(copy.components?.responses ?? {})) clean(response);
  for (const body of Object.values(copy.components?.requestBodies ?? {}))
    mediaTypes(/** @type {any} */ (body)?.content);
  return changed === 0 ? null : copy;
}

module.exports = {
  requestable,
  servedCopy,
  inlineSchema,
  METHODS,
  MAX_DEPTH,
  resolvePointer,
  deref,
  templateKey,
  isInstanceOf,
  listOperations,
  jsonContent,
  numericStatuses,
  flattenSchema,
  flattenValue,
  valueType,
};
