// A library's index ("barrel") for jest, each export required on first use (jest.config.js:
// moduleNameMapper maps the library's name to the files beside this one).
//
// Why: jest loads every module again for each test file (a module registry per file), and a test
// file that starts a backend loads some 2,800. Some indexes require all of their library when the
// backend uses a few of its exports: es-toolkit/compat (430 modules; @nestjs/swagger calls a dozen
// functions) and rxjs with rxjs/operators (230; NestJS uses some 30); and class-validator's decorators'
// index (113 decorators, with validator and libphonenumber-js some 300 modules; the backend uses 19
// decorators: resolver.js). Here each export of the index
// is a getter that requires the module the index itself names for it, so a test file loads those it
// uses: the same code from the same files, in the same registry (an object is the same object
// whichever way it was reached). The index is read as text, line by line, in the forms its bundler
// writes (rolldown's `const require_x = require("…")` / `exports.a = require_x.a`, tsc's
// `var x_1 = require("…")` / `Object.defineProperty(exports, "a", { … get: … x_1.a … })`); a line of
// any other form (another version of the library) and the index is loaded whole, as without this.
// The built backend and the agent's bundle load these libraries as Node resolves them.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const NODE_MODULES = path.join(__dirname, '../../node_modules');
const REQUIRE = /^(?:const|var) ([\w$]+) = require\("([^"]+)"\);$/;
const EXPORT_ASSIGN = /^exports\.([\w$]+) = ([\w$]+)\.([\w$]+);$/;
const EXPORT_GETTER =
  /^Object\.defineProperty\(exports, "([\w$]+)", \{ enumerable: true, get: function \(\) \{ return ([\w$]+)\.([\w$]+); \} \}\);$/;
const EXPORT_STAR = /^__exportStar\(require\("([^"]+)"\), exports\);$/;
/** tsc's first line of a module: every name it exports (but by `export *`), set to undefined. */
const DECLARED = /^exports\.[\w$]+(?: = exports\.[\w$]+)* = void 0;$/;
/** Lines that export nothing: strictness, tsc's `exports.a = exports.b = void 0`, the source map, comments, the ES module marks. */
const INERT = [
  /^$/,
  /^"use strict";$/,
  /^\/\/# sourceMappingURL=\S+$/,
  /^\/\/ .*$/,
  DECLARED,
  /^Object\.defineProperty\(exports, "__esModule", \{ value: true \}\);$/,
];
/** Blocks that define no export: rolldown's ES module marks, tsc's helpers (used by `__exportStar` lines only). */
const INERT_BLOCKS = [
  { start: /^Object\.defineProperties\(exports, \{$/, end: /^\}\);$/ },
  { start: /^var __(?:createBinding|exportStar) = /, end: /^(?:\}\)\);|\};)$/ },
];

/**
 * The names a module tsc wrote exports, read from its first line (`exports.a = exports.b = void 0;`),
 * or undefined when it may export others: any other use of `exports.<name>`, an export defined
 * otherwise, an `export *` or `module.exports`.
 * @param {string} file
 * @returns {string[] | undefined}
 */
function declaredExports(file) {
  const source = fs.readFileSync(file, 'utf8');
  if (/module\.exports|__exportStar|Object\.defineProperty\(exports, "(?!__esModule")/.test(source)) return undefined;
  const header = source.split('\n').find((line) => DECLARED.test(line));
  // `exports.a = exports.b = void 0` defines b first: the names in the order the module defines them.
  const declared =
    header === undefined ? [] : [...header.matchAll(/exports\.([\w$]+)/g)].map((match) => match[1]).reverse();
  for (const [, name] of source.matchAll(/\bexports\.([\w$]+)/g)) if (!declared.includes(name)) return undefined;
  return declared;
}

/**
 * Defines on `target` (a module's exports) the exports of `index`, each required on first use.
 * @param {string} index the library's index, relative to node_modules
 * @param {object} target
 * @param {object} [options]
 * @param {string[]} [options.whole] exports read from the whole index (their value is set as it runs)
 * @param {string[]} [options.inertRequires] bare `require("…")` lines of the index known to export and change nothing
 * @param {boolean} [options.lazyStars] `export *` of a module whose names its first line declares
 *   (declaredExports) defines each of them, that module required on first use; else it is required at once
 * @returns {object} `target`, or the whole index when a line of it is of another form
 */
function lazyBarrel(index, target, { whole = [], inertRequires = [], lazyStars = false } = {}) {
  const file = path.join(NODE_MODULES, index);
  const dir = path.dirname(file);
  /** @type {Map<string, string>} */
  const modules = new Map();
  /** @type {Map<string, {module: string, name: string}>} */
  const exported = new Map();
  /** @type {string[]} */
  const stars = [];
  let block = null;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (block !== null) {
      if (block.end.test(line)) block = null;
      continue;
    }
    block = INERT_BLOCKS.find((candidate) => candidate.start.test(line)) ?? null;
    if (block !== null || INERT.some((pattern) => pattern.test(line))) continue;
    const bare = /^require\("([^"]+)"\);$/.exec(line);
    if (bare && inertRequires.includes(bare[1])) continue;
    const required = REQUIRE.exec(line);
    if (required) {
      modules.set(required[1], path.resolve(dir, required[2]));
      continue;
    }
    const star = EXPORT_STAR.exec(line);
    if (star) {
      stars.push(require.resolve(path.resolve(dir, star[1])));
      continue;
    }
    const exportLine = EXPORT_ASSIGN.exec(line) ?? EXPORT_GETTER.exec(line);
    const module = exportLine && modules.get(exportLine[2]);
    if (!exportLine || module === undefined) return require(file);
    exported.set(exportLine[1], { module, name: exportLine[3] });
  }
  Object.defineProperty(target, '__esModule', { value: true });
  // Compiled ES modules read an import at each use (`(0, _rxjs.isObservable)(x)`): a getter keeps the
  // module it required, so a use after the first costs a property read, not a require of jest's.
  let wholeIndex;
  for (const [key, { module, name }] of exported) {
    let loaded;
    Object.defineProperty(target, key, {
      enumerable: true,
      get: whole.includes(key) ? () => (wholeIndex ??= require(file))[key] : () => (loaded ??= require(module))[name],
    });
  }
  // `export *` of a module (rxjs's types, empty; class-validator's decorators): its exports as the
  // index has them, after its own, the first module exporting a name giving it (as tsc's __exportStar).
  for (const module of stars) {
    const names = lazyStars ? declaredExports(module) : undefined;
    if (names !== undefined) {
      let loaded;
      for (const key of names)
        if (key !== 'default' && !Object.prototype.hasOwnProperty.call(target, key))
          Object.defineProperty(target, key, { enumerable: true, get: () => (loaded ??= require(module))[key] });
      continue;
    }
    const starred = require(module);
    for (const key of Object.keys(starred))
      if (key !== 'default' && !Object.prototype.hasOwnProperty.call(target, key))
        Object.defineProperty(target, key, { enumerable: true, get: () => starred[key] });
  }
  return target;
}

module.exports = { lazyBarrel };
