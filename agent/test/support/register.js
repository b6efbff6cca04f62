// Lets a child `node -r ./register.js agent/src/cli.ts` run the TypeScript sources, the way jest
// does (swc, same .swcrc), with @spectator/shared mapped to its sources: no build needed for tests.
//
// Each file's transform is kept by its content (node_modules/.cache/spectator-swc): the tests that
// start the backend from the sources again and again (restarts, cold starts) pay swc for its ~280
// files once per change, not once per start.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');

const root = path.resolve(__dirname, '../../..');
const options = JSON.parse(fs.readFileSync(path.join(root, '.swcrc'), 'utf8'));
delete options.$schema;
const cacheDir = path.join(root, 'node_modules/.cache/spectator-swc');
/** @type {typeof import('@swc/core') | null} */
let swc = null;
/** What else a transform depends on: swc's version and the options (made at the first transform). */
let salt = null;

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const match = /^@spectator\/(shared|agent)$/.exec(request);
  return resolve.call(this, match ? path.join(root, match[1], 'src/index.ts') : request, ...rest);
};

function swcVersion() {
  return JSON.parse(fs.readFileSync(require.resolve('@swc/core/package.json'), 'utf8')).version;
}

/** The file's JavaScript: from the cache when this source, path, options and swc made it before. */
function transform(source, filename) {
  salt ??= `${swcVersion()}\0${JSON.stringify(options)}`;
  const key = crypto.createHash('sha256').update(salt).update('\0').update(filename).update('\0').update(source);
  const cached = path.join(cacheDir, `${key.digest('hex')}.js`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch {
    // not cached yet
  }
  swc ??= require('@swc/core');
  const { code } = swc.transformSync(source, { ...options, swcrc: false, filename });
  try {
    // Written aside and renamed: processes starting at once never read half a file.
    fs.mkdirSync(cacheDir, { recursive: true });
    const partial = `${cached}.${process.pid}.tmp`;
    fs.writeFileSync(partial, code);
    fs.renameSync(partial, cached);
  } catch {
    // a read-only tree: transform each time
  }
  return code;
}

require.extensions['.ts'] = (module, filename) => {
  module._compile(transform(fs.readFileSync(filename, 'utf8'), filename), filename);
};
