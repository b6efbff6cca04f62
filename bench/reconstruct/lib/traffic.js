// @ts-check
// The traffic of one document: for each operation 3-10 requests with realistic, varied path
// values (numbers, UUIDs, names and slugs, by the parameter's schema and name), query parameters,
// a valid JSON body generated from its schema, and one request per other status the operation
// documents (`Prefer: code=404`, which the mock honours). All by seed: the same plan every run.
const { createRng } = require('./rng');
const { deref, inlineSchema, jsonContent, numericStatuses } = require('./openapi');

/** @typedef {import('./rng').Rng} Rng */
/** @typedef {import('./openapi').Operation} Operation */

/**
 * @typedef {object} PlannedRequest
 * @property {number} operation index of the operation in listOperations(doc)
 * @property {string} method
 * @property {string} path the concrete path with its query string
 * @property {Record<string, string>} headers
 * @property {string | undefined} body
 * @property {number | undefined} prefer the status asked of the mock, if any
 */

const FIRST_NAMES = [
  'alice',
  'bob',
  'carol',
  'dave',
  'erin',
  'frank',
  'grace',
  'heidi',
  'ivan',
  'judy',
  'mallory',
  'oscar',
  'peggy',
  'trent',
  'victor',
  'walter',
];
const ORGS = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'stark', 'wayne', 'tyrell', 'cyberdyne', 'wonka'];
const WORDS = [
  'infra',
  'web',
  'cli',
  'payments',
  'search',
  'mobile',
  'data',
  'docs',
  'api',
  'core',
  'billing',
  'dinner',
  'summer',
  'north',
  'blue',
  'river',
];

/**
 * A name or slug as people write them: `alice`, `bob-infra`, `acme-payments`, `Dave`.
 * @param {Rng} rng
 * @returns {string}
 */
function nameOrSlug(rng) {
  const form = rng.int(0, 4);
  if (form === 0) return rng.pick(FIRST_NAMES);
  if (form === 1) return `${rng.pick(FIRST_NAMES)}-${rng.pick(WORDS)}`;
  if (form === 2) return `${rng.pick(ORGS)}-${rng.pick(WORDS)}`;
  if (form === 3) return rng.pick(ORGS);
  const name = rng.pick(FIRST_NAMES);
  return `${name.charAt(0).toUpperCase()}${name.slice(1)}${rng.int(1, 99)}`;
}

/**
 * @param {Rng} rng
 * @returns {string} a random version-4 UUID
 */
function uuid(rng) {
  const hex = (/** @type {number} */ count) =>
    Array.from({ length: count }, () => rng.int(0, 15).toString(16)).join('');
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${rng.pick(['8', '9', 'a', 'b'])}${hex(3)}-${hex(12)}`;
}

/**
 * @param {Rng} rng
 * @param {any} schema
 * @returns {number}
 */
function integerIn(rng, schema) {
  const low = typeof schema.minimum === 'number' ? Math.ceil(schema.minimum) : 1;
  const high = typeof schema.maximum === 'number' ? Math.floor(schema.maximum) : Math.max(low, 1) * 1000 + 99_999;
  return rng.int(Math.max(low, Math.min(high, 1)), Math.max(high, low));
}

/**
 * A string that satisfies a schema's length and pattern, or undefined.
 * @param {string} value
 * @param {any} schema
 * @returns {boolean}
 */
function fitsString(value, schema) {
  if (typeof schema.minLength === 'number' && value.length < schema.minLength) return false;
  if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) return false;
  if (typeof schema.pattern === 'string') {
    try {
      if (!new RegExp(schema.pattern, 'u').test(value)) return false;
    } catch {
      return true;
    }
  }
  return true;
}

/**
 * One value for a path parameter: from its enum; a number for a numeric schema; a UUID for
 * format uuid or a name with uuid/guid; a date for a date format; digits for a string named like
 * an id; else a name or slug. A string that breaks the schema's pattern or length is generated
 * from the schema instead.
 * @param {any} parameter resolved
 * @param {any} doc
 * @param {Rng} rng
 * @param {(schema: any, rng: Rng, body?: boolean) => unknown} generate generates a value from a schema
 * @returns {string}
 */
function pathValue(parameter, doc, rng, generate) {
  const schema = inlineSchema(doc, deref(doc, parameter.schema) ?? {});
  const name = String(parameter.name);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return String(rng.pick(schema.enum));
  if (schema.type === 'integer') return String(integerIn(rng, schema));
  if (schema.type === 'number') return String(integerIn(rng, schema));
  if (schema.type === 'boolean') return String(rng.pick([true, false]));
  /** @type {string} */
  let value;
  if (schema.format === 'uuid' || /uuid|guid/i.test(name)) value = uuid(rng);
  else if (schema.format === 'date') value = `20${rng.int(10, 26)}-0${rng.int(1, 9)}-${rng.int(10, 28)}`;
  else if (schema.format === 'date-time')
    value = `20${rng.int(10, 26)}-0${rng.int(1, 9)}-${rng.int(10, 28)}T${rng.int(10, 23)}:${rng.int(10, 59)}:00Z`;
  else if (schema.format === 'email') value = `${rng.pick(FIRST_NAMES)}@example.com`;
  else if (/(^id$|Id$|_id$|ID$|-id$|number$|Number$|_no$)/.test(name)) value = String(rng.int(100, 999_999));
  else value = nameOrSlug(rng);
  for (let attempt = 0; attempt < 10 && !fitsString(value, schema); attempt++) {
    const generated = generate(schema, rng);
    value = typeof generated === 'string' ? generated : String(generated);
  }
  return value;
}

/**
 * A query value: the schema's enum or a generated value, arrays written once per item.
 * @param {any} parameter resolved
 * @param {any} doc
 * @param {Rng} rng
 * @param {(schema: any, rng: Rng, body?: boolean) => unknown} generate
 * @returns {string[]}
 */
function queryValues(parameter, doc, rng, generate) {
  const schema = inlineSchema(doc, deref(doc, parameter.schema) ?? {});
  const value = generate(schema, rng);
  const items = Array.isArray(value) ? value.slice(0, 3) : [value];
  // An empty value reads as a missing one to the mock; a required parameter must have one.
  return items
    .map((item) => (item !== null && typeof item === 'object' ? JSON.stringify(item) : String(item)))
    .map((text) => (text === '' ? 'bench' : text));
}

/**
 * The value of a required Accept or Content-Type header parameter: its enum, default or example,
 * else JSON.
 * @param {any} parameter resolved
 * @param {any} doc
 * @returns {string}
 */
function mediaTypeValue(parameter, doc) {
  const schema = deref(doc, parameter.schema) ?? {};
  const given = Array.isArray(schema.enum) ? schema.enum[0] : (schema.default ?? parameter.example ?? schema.example);
  return typeof given === 'string' && given !== '' ? given : 'application/json';
}

/**
 * Credentials for the first security requirement of an operation, so the mock does not answer 401.
 * @param {any} doc
 * @param {Operation} operation
 * @returns {{ headers: Record<string, string>, query: Record<string, string>, cookies: string[] }}
 */
function credentials(doc, operation) {
  /** @type {Record<string, string>} */
  const headers = {};
  /** @type {Record<string, string>} */
  const query = {};
  /** @type {string[]} */
  const cookies = [];
  const requirements = operation.operation.security ?? doc.security ?? [];
  const first = Array.isArray(requirements)
    ? requirements.find((requirement) => requirement && typeof requirement === 'object')
    : undefined;
  for (const name of Object.keys(first ?? {})) {
    const scheme = deref(doc, doc.components?.securitySchemes?.[name]);
    if (!scheme) continue;
    if (scheme.type === 'apiKey') {
      if (scheme.in === 'query') query[scheme.name] = 'bench-key-0001';
      else if (scheme.in === 'cookie') cookies.push(`${scheme.name}=bench-key-0001`);
      else headers[String(scheme.name).toLowerCase()] = 'bench-key-0001';
    } else if (scheme.type === 'http' && String(scheme.scheme).toLowerCase() === 'basic')
      headers.authorization = `Basic ${Buffer.from('bench:secret').toString('base64')}`;
    else headers.authorization = 'Bearer bench-token-0001';
  }
  if (cookies.length > 0) headers.cookie = cookies.join('; ');
  return { headers, query, cookies };
}

/**
 * The names of query parameters that carry credentials (apiKey in query): sent with the traffic,
 * but not parameters of any operation, so left out of the query-name scores on every side.
 * @param {any} doc
 * @returns {Set<string>}
 */
function credentialQueryNames(doc) {
  const names = new Set();
  for (const raw of Object.values(doc.components?.securitySchemes ?? {})) {
    const scheme = deref(doc, raw);
    if (scheme?.type === 'apiKey' && scheme.in === 'query') names.add(String(scheme.name));
  }
  return names;
}

/**
 * A JSON, form or plain text body for an operation's request, when it documents one.
 * @param {any} doc
 * @param {Operation} operation
 * @param {Rng} rng
 * @param {(schema: any, rng: Rng, body?: boolean) => unknown} generate
 * @returns {{ contentType: string, text: string } | undefined}
 */
function requestBody(doc, operation, rng, generate) {
  const content = operation.requestBody?.content;
  const json = jsonContent(content);
  if (json?.schema)
    return {
      contentType: 'application/json',
      text: JSON.stringify(generate(inlineSchema(doc, json.schema), rng, true)),
    };
  const form = content?.['application/x-www-form-urlencoded']?.schema;
  if (form) {
    const value = generate(inlineSchema(doc, form), rng, true);
    const params = new URLSearchParams();
    for (const [key, item] of Object.entries(value && typeof value === 'object' ? value : {}))
      params.append(key, typeof item === 'object' ? JSON.stringify(item) : String(item));
    return { contentType: 'application/x-www-form-urlencoded', text: params.toString() };
  }
  const text = content?.['text/plain']?.schema;
  if (text) return { contentType: 'text/plain', text: String(generate(inlineSchema(doc, text), rng)) };
  return undefined;
}

/**
 * The Accept header for an operation: the JSON media type its success answer declares
 * (`application/vnd.waterlinked.antenna_config+json` too, as a client of that API sends: the mock
 * answers 406 to `application/json` there), JSON when it declares no body, else anything.
 * @param {Operation} operation
 * @param {number | undefined} success
 * @returns {string}
 */
function acceptFor(operation, success) {
  const content = success === undefined ? undefined : operation.responses.get(String(success))?.content;
  if (!content) return 'application/json';
  return jsonContent(content)?.mediaType ?? '*/*';
}

/**
 * The requests of one operation.
 * @param {any} doc
 * @param {Operation} operation
 * @param {number} index the operation's index
 * @param {Rng} rng
 * @param {(schema: any, rng: Rng, body?: boolean) => unknown} generate
 * @returns {PlannedRequest[]}
 */
function planOperation(doc, operation, index, rng, generate) {
  const statuses = numericStatuses(operation.responses);
  const success = statuses.find((status) => status >= 200 && status < 300);
  const others = statuses.filter((status) => status !== success);
  const plain = rng.int(3, 10);
  const auth = credentials(doc, operation);
  /** @type {PlannedRequest[]} */
  const requests = [];
  for (let ordinal = 0; ordinal < plain + others.length; ordinal++) {
    const prefer = ordinal < plain ? undefined : others[ordinal - plain];
    let path = operation.path.replace(/\{([^}]+)\}/g, (_whole, name) => {
      const parameter = operation.parameters.find(
        (candidate) => candidate.in === 'path' && candidate.name === name,
      ) ?? { name, schema: { type: 'string' } };
      return encodeURIComponent(pathValue(parameter, doc, rng, generate));
    });
    const query = new URLSearchParams(auth.query);
    /** @type {Record<string, string>} */
    const headers = { accept: acceptFor(operation, success), ...auth.headers };
    for (const parameter of operation.parameters) {
      const send = parameter.required === true || rng.next() < 0.5;
      if (!send) continue;
      if (parameter.in === 'query')
        for (const value of queryValues(parameter, doc, rng, generate)) query.append(parameter.name, value);
      else if (parameter.in === 'header') {
        const name = String(parameter.name).toLowerCase();
        if (name === 'authorization' || ((name === 'accept' || name === 'content-type') && parameter.required !== true))
          continue;
        headers[name] =
          name === 'accept' || name === 'content-type'
            ? mediaTypeValue(parameter, doc)
            : queryValues(parameter, doc, rng, generate)[0] || 'bench';
      }
    }
    const search = query.toString();
    if (search !== '') path = `${path}?${search}`;
    const body = requestBody(doc, operation, rng, generate);
    if (body && !headers['content-type']) headers['content-type'] = body.contentType;
    if (prefer !== undefined) headers.prefer = `code=${prefer}`;
    requests.push({ operation: index, method: operation.method, path, headers, body: body?.text, prefer });
  }
  return requests;
}

/**
 * The whole traffic of a document, operations interleaved in a seeded order as real traffic is.
 * @param {any} doc
 * @param {Operation[]} operations listOperations(doc), without those the bench leaves out
 * @param {number | string} seed
 * @param {(schema: any, rng: Rng, body?: boolean) => unknown} generate generates a valid value from a schema
 * @returns {PlannedRequest[]}
 */
function planTraffic(doc, operations, seed, generate) {
  const rng = createRng(seed);
  const requests = operations.flatMap((operation, index) =>
    planOperation(doc, operation, index, rng.fork(`${operation.method} ${operation.path}`), generate),
  );
  return rng.fork('order').shuffle(requests);
}

module.exports = {
  planTraffic,
  planOperation,
  pathValue,
  nameOrSlug,
  uuid,
  credentials,
  credentialQueryNames,
  fitsString,
};
