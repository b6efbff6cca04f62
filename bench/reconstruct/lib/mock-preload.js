// @ts-check
// With `--varied`, loaded into the mock's process (`node --require`, see startPrism in run.js) so that its answers
// vary from request to request the way a real API's do, yet are the same on every run:
// - Math.random is seeded (BENCH_MOCK_SEED): the mock's generator and faker draw from it, and the
//   bench sends one request at a time in a seeded order, so the traffic repeats run after run
//   (prism's own `--seed` resets the generator on every answer: every answer of an operation and
//   status was the same body);
// - the generator leaves out a random subset of the optional properties of each object it makes
//   (json-schema-faker's own default) instead of prism's "fake every optional property": with every
//   optional field in every answer no traffic can tell a required field from an optional one, and
//   required accuracy measured the share of required fields in the documents, not an inference;
// - no made-up extra properties (`fillProperties: false`, which prism's command-line option sets
//   on another copy of the generator than the one that answers).
const path = require('node:path');
const { createRng } = require('./rng');

const seed = process.env.BENCH_MOCK_SEED;
if (seed) Math.random = createRng(`mock:${seed}`).next;

const prismHttp = path.dirname(
  require.resolve('@stoplight/prism-http/package.json', { paths: [path.join(__dirname, '..')] }),
);
/** @type {{ JSONSchemaFaker: { option: (name: any, value?: any) => void } }} */
const jsf = require(require.resolve('json-schema-faker', { paths: [prismHttp] }));
const faker = jsf.JSONSchemaFaker;
const option = faker.option.bind(faker);
const overrides = {
  alwaysFakeOptionals: false,
  optionalsProbability: null,
  fixedProbabilities: false,
  fillProperties: false,
};
/** @param {any} name @param {any} [value] */
faker.option = (name, value) => {
  option(name, value);
  option(overrides);
};
option(overrides);
