// Lets a child `node -r ./register.js agent/src/cli.ts` run the TypeScript sources, the way jest
// does (swc, same .swcrc), with @spectator/shared mapped to its sources: no build needed for tests.
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const swc = require('@swc/core');

const root = path.resolve(__dirname, '../../..');
const options = JSON.parse(fs.readFileSync(path.join(root, '.swcrc'), 'utf8'));
delete options.$schema;

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const match = /^@spectator\/(shared|agent)$/.exec(request);
  return resolve.call(this, match ? path.join(root, match[1], 'src/index.ts') : request, ...rest);
};
require.extensions['.ts'] = (module, filename) => {
  const { code } = swc.transformSync(fs.readFileSync(filename, 'utf8'), { ...options, swcrc: false, filename });
  module._compile(code, filename);
};
