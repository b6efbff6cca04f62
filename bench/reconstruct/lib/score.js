// @ts-check
// Scores of a reconstructed OpenAPI document against its source, on the traffic that was played.
//
// - Operations: a contender operation is right when its method and template equal a source
//   operation's, parameter names aside (`/repos/{owner}/{repo}` = `/repos/{a}/{b}`; a parameter
//   where the source has a literal, or the reverse, is wrong). Recall is over the source
//   operations the traffic reached; precision over every contender operation.
// - Exploded: a source operation whose traffic the contender spread over two or more operations
//   (literal copies such as `/users/alice`, `/users/bob` of `/users/{user}`, with or without the
//   template itself).
// - Fields, statuses, query names: on each operation the contender got right. Recall: of what the
//   source defines AND the traffic showed, the share the contender documents (a request body
//   shows its fields once the API accepted it, 2xx or 3xx, the rule Spectator documents by).
//   Precision: of what the contender documents, the share the source defines; what the traffic
//   showed beyond the source (a 406 or 422 the mock made up, extra keys of an open object) is
//   neither credited nor held against anyone. Fields are JSON paths (`owner.login`,
//   `items[].id`); type accuracy is the share of common fields whose documented types the source
//   allows (integer counts as number, null aside); required accuracy the share whose required
//   flag agrees.
const {
  flattenSchema,
  flattenValue,
  isInstanceOf,
  jsonContent,
  listOperations,
  numericStatuses,
} = require('./openapi');

/** @typedef {import('./openapi').Operation} Operation */
/** @typedef {import('./send').Exchange} Exchange */

/**
 * @typedef {object} Observation what the traffic of one source operation showed
 * @property {number} requests
 * @property {Set<number>} statuses
 * @property {Set<string>} queryNames
 * @property {Map<number, Map<string, Set<string>>>} responseFields by status: path → JSON types seen there
 * @property {Map<string, Set<string>>} requestFields of the bodies of accepted requests (answered 2xx or
 *   3xx): path → JSON types seen there
 */

/**
 * Adds the fields a JSON value shows, with the types seen at each, to those seen before.
 * @param {Map<string, Set<string>>} into
 * @param {unknown} value
 */
function addShown(into, value) {
  for (const [field, types] of flattenValue(value)) {
    const seen = into.get(field) ?? new Set();
    for (const type of types) seen.add(type);
    into.set(field, seen);
  }
}

/**
 * @param {string} text
 * @returns {unknown} the parsed JSON, or undefined
 */
function parseJson(text) {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * What the traffic showed per source operation (by index in the operations list).
 * @param {Exchange[]} exchanges
 * @returns {Map<number, Observation>}
 */
function observe(exchanges) {
  /** @type {Map<number, Observation>} */
  const observations = new Map();
  for (const exchange of exchanges) {
    if (exchange.status === 0) continue;
    const index = exchange.request.operation;
    const observation = observations.get(index) ?? {
      requests: 0,
      statuses: new Set(),
      queryNames: new Set(),
      responseFields: new Map(),
      requestFields: new Map(),
    };
    observations.set(index, observation);
    observation.requests++;
    observation.statuses.add(exchange.status);
    for (const name of new URL(exchange.url).searchParams.keys()) observation.queryNames.add(name);
    if (/json/i.test(exchange.responseHeaders['content-type'] ?? '')) {
      const fields = observation.responseFields.get(exchange.status) ?? new Map();
      addShown(fields, parseJson(exchange.responseText));
      observation.responseFields.set(exchange.status, fields);
    }
    // A request body counts once the API accepted it (2xx, 3xx): what it refused documents nothing.
    if (
      exchange.status < 400 &&
      exchange.request.body !== undefined &&
      /json/i.test(exchange.request.headers['content-type'] ?? '')
    ) {
      addShown(observation.requestFields, parseJson(exchange.request.body));
    }
  }
  return observations;
}

/**
 * @typedef {object} SetCounts counts for precision and recall of a set of names
 * @property {number} hitsP contender items the source defines
 * @property {number} totalP contender items, less those the traffic showed beyond the source
 * @property {number} hitsR source items the traffic showed that the contender has
 * @property {number} totalR source items the traffic showed
 */

/**
 * @typedef {object} FieldCounts
 * @property {SetCounts} set
 * @property {number} typeRight
 * @property {number} typeTotal
 * @property {number} requiredRight
 * @property {number} requiredTotal
 */

/**
 * @typedef {object} Counts the scores of one contender on one or more documents, as sums
 * @property {number} documents
 * @property {number} sourceOperations source operations the traffic reached
 * @property {number} contenderOperations
 * @property {number} rightOperations
 * @property {number} exploded source operations spread over 2+ contender operations
 * @property {number} literalCopies contender operations that are literal copies of a source template
 * @property {FieldCounts} response
 * @property {FieldCounts} request
 * @property {SetCounts} statuses
 * @property {SetCounts} query
 */

/** @returns {SetCounts} */
function emptySet() {
  return { hitsP: 0, totalP: 0, hitsR: 0, totalR: 0 };
}

/** @returns {FieldCounts} */
function emptyFields() {
  return { set: emptySet(), typeRight: 0, typeTotal: 0, requiredRight: 0, requiredTotal: 0 };
}

/** @returns {Counts} */
function emptyCounts() {
  return {
    documents: 0,
    sourceOperations: 0,
    contenderOperations: 0,
    rightOperations: 0,
    exploded: 0,
    literalCopies: 0,
    response: emptyFields(),
    request: emptyFields(),
    statuses: emptySet(),
    query: emptySet(),
  };
}

/**
 * Adds the counts of a set comparison.
 * @template T
 * @param {SetCounts} counts
 * @param {Set<T>} contender
 * @param {Set<T>} source
 * @param {{ has: (item: T) => boolean }} shown what the traffic showed
 */
function countSet(counts, contender, source, shown) {
  for (const item of contender) {
    if (source.has(item)) {
      counts.hitsP++;
      counts.totalP++;
    } else if (!shown.has(item)) counts.totalP++;
  }
  for (const item of source) {
    if (!shown.has(item)) continue;
    counts.totalR++;
    if (contender.has(item)) counts.hitsR++;
  }
}

/**
 * Adds the counts of a field comparison. Types and required flags are judged on the fields both
 * sides have that the traffic showed: a type where it showed a value other than `null` (a field
 * only ever `null`, or the items of arrays only ever empty, tell no type), a required flag where
 * it showed the field at all. What the traffic never showed no contender can have learnt from it.
 * @param {FieldCounts} counts
 * @param {Map<string, import('./openapi').Field>} contender
 * @param {Map<string, import('./openapi').Field>} source
 * @param {Map<string, Set<string>>} shown path → JSON types the traffic showed there
 */
function countFields(counts, contender, source, shown) {
  countSet(counts.set, new Set(contender.keys()), new Set(source.keys()), shown);
  for (const [path, field] of contender) {
    const truth = source.get(path);
    const seen = shown.get(path);
    if (!truth || !seen) continue;
    if ([...seen].some((type) => type !== 'null')) {
      counts.typeTotal++;
      if (field.types.size > 0 && (truth.types.size === 0 || [...field.types].every((type) => truth.types.has(type))))
        counts.typeRight++;
    }
    counts.requiredTotal++;
    if (field.required === truth.required) counts.requiredRight++;
  }
}

/**
 * The fields of the JSON body of a request body or response object.
 * @param {any} doc
 * @param {any} holder a resolved request body or response
 * @returns {Map<string, import('./openapi').Field>}
 */
function bodyFields(doc, holder) {
  const json = jsonContent(holder?.content);
  return json?.schema ? flattenSchema(doc, json.schema) : new Map();
}

/**
 * @param {Operation} operation
 * @returns {Set<string>}
 */
function queryNamesOf(operation) {
  return new Set(
    operation.parameters.filter((parameter) => parameter.in === 'query').map((parameter) => String(parameter.name)),
  );
}

/**
 * Scores one contender's document against the source on one document's traffic.
 * @param {{ source: any, operations: Operation[], observations: Map<number, Observation>, contender: any }} input
 *   operations: the source operations the traffic was planned for (observations are keyed by their index)
 * @returns {Counts}
 */
function scoreDocument({ source, operations, observations, contender }) {
  const counts = emptyCounts();
  counts.documents = 1;
  const theirs = listOperations(contender ?? {});
  counts.contenderOperations = theirs.length;
  const reached = operations
    .map((operation, index) => ({ operation, observation: observations.get(index) }))
    .filter((entry) => entry.observation !== undefined);
  counts.sourceOperations = reached.length;
  const exactKeys = new Set(operations.map((operation) => `${operation.method} ${operation.key}`));
  for (const { operation, observation } of reached) {
    if (!observation) continue;
    const match = theirs.find((candidate) => candidate.method === operation.method && candidate.key === operation.key);
    const copies = theirs.filter(
      (candidate) =>
        candidate.method === operation.method &&
        candidate.key !== operation.key &&
        !exactKeys.has(`${candidate.method} ${candidate.key}`) &&
        isInstanceOf(candidate.key, operation.key),
    );
    counts.literalCopies += copies.length;
    if (copies.length + (match ? 1 : 0) >= 2) counts.exploded++;
    if (!match) continue;
    counts.rightOperations++;

    const sourceStatuses = new Set(numericStatuses(operation.responses));
    countSet(counts.statuses, new Set(numericStatuses(match.responses)), sourceStatuses, observation.statuses);
    countSet(counts.query, queryNamesOf(match), queryNamesOf(operation), observation.queryNames);
    for (const status of sourceStatuses) {
      if (!observation.statuses.has(status)) continue;
      countFields(
        counts.response,
        bodyFields(contender, match.responses.get(String(status))),
        bodyFields(source, operation.responses.get(String(status))),
        observation.responseFields.get(status) ?? new Map(),
      );
    }
    countFields(
      counts.request,
      bodyFields(contender, match.requestBody),
      bodyFields(source, operation.requestBody),
      observation.requestFields,
    );
  }
  return counts;
}

/**
 * Which operations a contender got wrong: the source operations the traffic reached that it has
 * no exact match for, and its operations that match no source operation (`METHOD /path` as each
 * side writes them). For reading a document's result, not for scores.
 * @param {{ operations: Operation[], observations: Map<number, Observation>, contender: any }} input
 * @returns {{ missed: string[], extra: string[] }}
 */
function operationDiff({ operations, observations, contender }) {
  const theirs = listOperations(contender ?? {});
  const ours = new Set(operations.map((operation) => `${operation.method} ${operation.key}`));
  const found = new Set(theirs.map((operation) => `${operation.method} ${operation.key}`));
  return {
    missed: operations
      .filter((operation, index) => observations.has(index) && !found.has(`${operation.method} ${operation.key}`))
      .map((operation) => `${operation.method} ${operation.path}`),
    extra: theirs
      .filter((operation) => !ours.has(`${operation.method} ${operation.key}`))
      .map((operation) => `${operation.method} ${operation.path}`),
  };
}

/**
 * @param {SetCounts} a
 * @param {SetCounts} b
 * @returns {SetCounts}
 */
function addSet(a, b) {
  return {
    hitsP: a.hitsP + b.hitsP,
    totalP: a.totalP + b.totalP,
    hitsR: a.hitsR + b.hitsR,
    totalR: a.totalR + b.totalR,
  };
}

/**
 * @param {FieldCounts} a
 * @param {FieldCounts} b
 * @returns {FieldCounts}
 */
function addFields(a, b) {
  return {
    set: addSet(a.set, b.set),
    typeRight: a.typeRight + b.typeRight,
    typeTotal: a.typeTotal + b.typeTotal,
    requiredRight: a.requiredRight + b.requiredRight,
    requiredTotal: a.requiredTotal + b.requiredTotal,
  };
}

/**
 * Sums of two counts (micro-averaging over documents).
 * @param {Counts} a
 * @param {Counts} b
 * @returns {Counts}
 */
function addCounts(a, b) {
  return {
    documents: a.documents + b.documents,
    sourceOperations: a.sourceOperations + b.sourceOperations,
    contenderOperations: a.contenderOperations + b.contenderOperations,
    rightOperations: a.rightOperations + b.rightOperations,
    exploded: a.exploded + b.exploded,
    literalCopies: a.literalCopies + b.literalCopies,
    response: addFields(a.response, b.response),
    request: addFields(a.request, b.request),
    statuses: addSet(a.statuses, b.statuses),
    query: addSet(a.query, b.query),
  };
}

/**
 * @param {number} hits
 * @param {number} total
 * @returns {number | null} null when there is nothing to measure
 */
function ratio(hits, total) {
  return total === 0 ? null : hits / total;
}

/**
 * @param {number | null} precision
 * @param {number | null} recall
 * @returns {number | null}
 */
function f1(precision, recall) {
  if (precision === null || recall === null) return null;
  return precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
}

/**
 * @typedef {object} Prf
 * @property {number | null} precision
 * @property {number | null} recall
 * @property {number | null} f1
 */

/**
 * @param {SetCounts} counts
 * @returns {Prf}
 */
function prf(counts) {
  const precision = ratio(counts.hitsP, counts.totalP);
  const recall = ratio(counts.hitsR, counts.totalR);
  return { precision, recall, f1: f1(precision, recall) };
}

/**
 * @typedef {object} Summary
 * @property {Prf} operations
 * @property {number} exploded
 * @property {number} literalCopies
 * @property {Prf & { types: number | null, required: number | null }} response
 * @property {Prf & { types: number | null, required: number | null }} request
 * @property {Prf} statuses
 * @property {Prf} query
 */

/**
 * @param {Counts} counts
 * @returns {Summary}
 */
function summarize(counts) {
  const operations = prf({
    hitsP: counts.rightOperations,
    totalP: counts.contenderOperations,
    hitsR: counts.rightOperations,
    totalR: counts.sourceOperations,
  });
  /** @param {FieldCounts} fields */
  const fieldSummary = (fields) => ({
    ...prf(fields.set),
    types: ratio(fields.typeRight, fields.typeTotal),
    required: ratio(fields.requiredRight, fields.requiredTotal),
  });
  return {
    operations,
    exploded: counts.exploded,
    literalCopies: counts.literalCopies,
    response: fieldSummary(counts.response),
    request: fieldSummary(counts.request),
    statuses: prf(counts.statuses),
    query: prf(counts.query),
  };
}

/**
 * @param {number | null} value
 * @returns {string}
 */
function cell(value) {
  return value === null ? 'n/a' : value.toFixed(2);
}

/**
 * A Markdown table: one row per score, one column per contender.
 * @param {{ name: string, counts: Counts }[]} columns
 * @returns {string}
 */
function formatTable(columns) {
  const summaries = columns.map((column) => summarize(column.counts));
  /** @type {[string, (summary: Summary, counts: Counts) => string][]} */
  const rows = [
    ['operations: precision', (s) => cell(s.operations.precision)],
    ['operations: recall', (s) => cell(s.operations.recall)],
    ['operations: F1', (s) => cell(s.operations.f1)],
    [
      'operations right / reached / output',
      (_s, c) => `${c.rightOperations} / ${c.sourceOperations} / ${c.contenderOperations}`,
    ],
    ['exploded operations (literal copies)', (s) => `${s.exploded} (${s.literalCopies})`],
    ['response fields: precision', (s) => cell(s.response.precision)],
    ['response fields: recall', (s) => cell(s.response.recall)],
    ['response fields: F1', (s) => cell(s.response.f1)],
    ['response fields: type accuracy', (s) => cell(s.response.types)],
    ['response fields: required accuracy', (s) => cell(s.response.required)],
    ['request fields: precision', (s) => cell(s.request.precision)],
    ['request fields: recall', (s) => cell(s.request.recall)],
    ['request fields: F1', (s) => cell(s.request.f1)],
    ['request fields: type accuracy', (s) => cell(s.request.types)],
    ['request fields: required accuracy', (s) => cell(s.request.required)],
    ['status codes: precision', (s) => cell(s.statuses.precision)],
    ['status codes: recall', (s) => cell(s.statuses.recall)],
    ['status codes: F1', (s) => cell(s.statuses.f1)],
    ['query names: precision', (s) => cell(s.query.precision)],
    ['query names: recall', (s) => cell(s.query.recall)],
    ['query names: F1', (s) => cell(s.query.f1)],
  ];
  const header = `| score | ${columns.map((column) => column.name).join(' | ')} |`;
  const rule = `| --- | ${columns.map(() => '---:').join(' | ')} |`;
  const body = rows.map(
    ([label, value]) =>
      `| ${label} | ${summaries.map((summary, index) => value(summary, /** @type {{ counts: Counts }} */ (columns[index]).counts)).join(' | ')} |`,
  );
  return [header, rule, ...body].join('\n');
}

module.exports = {
  parseJson,
  observe,
  scoreDocument,
  operationDiff,
  addCounts,
  emptyCounts,
  summarize,
  formatTable,
  countSet,
  f1,
};
