// @ts-check
// Values from JSON Schemas, by json-schema-faker (the generator the mock uses too), seeded.
// Loaded from this folder's own install (bench/reconstruct/node_modules).
const path = require('node:path');

/** @typedef {import('./rng').Rng} Rng */

/**
 * A generator of valid values: every required property and every optional one, or for a request
 * body (`body`) with `someOptionals` a random subset of the optional ones (as clients send them:
 * `--varied`); arrays of 1-3 items, no extra properties, examples not used (so values vary).
 * @param {{ someOptionals?: boolean }} [options]
 * @returns {(schema: any, rng: Rng, body?: boolean) => unknown}
 */
function createGenerator({ someOptionals = false } = {}) {
  const jsf = require(require.resolve('json-schema-faker', { paths: [path.join(__dirname, '..')] }));
  return (schema, rng, body = false) => {
    jsf.option({
      random: rng.next,
      alwaysFakeOptionals: !(someOptionals && body),
      optionalsProbability: null,
      fixedProbabilities: false,
      fillProperties: false,
      minItems: 1,
      maxItems: 3,
      useExamplesValue: false,
      useDefaultValue: false,
      failOnInvalidTypes: false,
      failOnInvalidFormat: false,
      ignoreMissingRefs: true,
      maxLength: 40,
    });
    try {
      return jsf.generate(schema);
    } catch {
      return {};
    }
  };
}

module.exports = { createGenerator };
