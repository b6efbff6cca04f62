// jest's runtime with V8's code cache kept across test files (jest.config.js: `runtime`).
//
// Why: jest gives each test file a module registry of its own, so every file compiles again each
// module it loads — some 2,500 for a file that starts a backend (NestJS, TypeORM, class-validator…).
// jest compiles them with `vm.compileFunction`, which V8's in-process compilation cache does not
// serve (nodejs/node#35375), and that compile was about 1 CPU-s of the 1.3 a backend's import took
// in a test file. Here the first compile of a module (by file name and exact source) produces V8's
// code cache, and later files compile the same source from it. Only the parse and compile are
// shared: each file still runs every module afresh in its own registry and context, so nothing a
// test sees changes. V8 checks the cached data against the source and its own flags and rejects a
// mismatch (the module is then compiled as usual and its entry made again).
//
// It reaches into jest-runtime's module executor (`compile`, fields of jest-runtime 30); when those
// are not there (another jest), it says so once and leaves jest as it is. `SPECTATOR_JEST_CODE_CACHE=off` turns it
// off, to compare.
//
// The modules' sources are kept across test files too: jest's file cache is made anew for each test
// file, so each file read every module it loads again (readFileSync and a UTF-8 decode of some 2,800
// files for a file that starts a backend), only for jest's transformer to find the file's output in its
// own cache, which outlives the file (keyed by name and modification time). Here a file's source is
// read once a run and served again while its modification time and size are those it was read with;
// within a test file jest's own cache still answers first, so a file reads as it did. Off with
// `SPECTATOR_JEST_SOURCE_CACHE=off`, to compare.
'use strict';
const fs = require('node:fs');
const vm = require('node:vm');
const Runtime = require('jest-runtime').default;

/** @type {Map<string, {source: string, data: Buffer}>} file name and parameters -> its source and V8's code cache for it */
const codeCache = new Map();
const enabled = process.env.SPECTATOR_JEST_CODE_CACHE !== 'off';
/** @type {Map<string, {mtimeMs: number, size: number, source: string}>} file name -> its source as last read */
const sources = new Map();
const sourcesEnabled = process.env.SPECTATOR_JEST_SOURCE_CACHE !== 'off';
let warned = false;
let sourcesWarned = false;

/**
 * The source of `filename`, read again only when its modification time or size changed since.
 * @param {string} filename
 * @param {(filename: string) => string} read jest's own read, for a file not seen yet or changed
 */
function sharedSource(filename, read) {
  const { mtimeMs, size } = fs.statSync(filename);
  const entry = sources.get(filename);
  if (entry !== undefined && entry.mtimeMs === mtimeMs && entry.size === size) return entry.source;
  const source = read(filename);
  sources.set(filename, { mtimeMs, size, source });
  return source;
}

class CodeCachingRuntime extends Runtime {
  constructor(...args) {
    super(...args);
    const executor = this.executor;
    const fileCache = this.fileCache;
    if (sourcesEnabled) {
      if (
        typeof fileCache?.readFile === 'function' &&
        typeof fileCache.readFileBuffer === 'function' &&
        fileCache.strings instanceof Map
      ) {
        // jest's readFile: this file's cache of strings, else a read (kept in it). The read is shared.
        fileCache.readFile = (filename) => {
          let source = fileCache.strings.get(filename);
          if (source === undefined) {
            source = sharedSource(filename, (name) => fileCache.readFileBuffer(name).toString());
            fileCache.strings.set(filename, source);
          }
          return source;
        };
      } else if (!sourcesWarned) {
        process.stderr.write(
          'scripts/jest-runtime.js: jest-runtime has no file cache as in jest 30; sources are read per test file\n',
        );
        sourcesWarned = true;
      }
    }
    if (!enabled) return;
    if (typeof executor?.compile !== 'function' || typeof executor.dynamicImport !== 'function') {
      if (!warned)
        process.stderr.write(
          'scripts/jest-runtime.js: jest-runtime has no module executor as in jest 30; tests run without the code cache\n',
        );
      warned = true;
      return;
    }
    const compile = executor.compile.bind(executor);
    executor.compile = (source, filename) => {
      const context = executor.environment.getVmContext();
      if (context == null || executor.resolution.isCoreModule(filename)) return compile(source, filename);
      // The function's parameters (the same in every project here) are part of what was compiled.
      const key = `${filename}\0${executor.injectedModuleParameters.join(',')}`;
      const entry = codeCache.get(key);
      const cachedData = entry !== undefined && entry.source === source ? entry.data : undefined;
      let compiled;
      try {
        compiled = vm.compileFunction(source, executor.injectedModuleParameters, {
          filename,
          parsingContext: context,
          cachedData,
          produceCachedData: cachedData === undefined,
          importModuleDynamically: (specifier, _function, attributes, phase) =>
            executor.dynamicImport(specifier, filename, context, attributes, phase),
        });
      } catch {
        // jest's own compile throws the error it explains (a syntax error, ESM where CommonJS was expected).
        return compile(source, filename);
      }
      if (cachedData === undefined || compiled.cachedDataRejected) {
        if (compiled.cachedData !== undefined) codeCache.set(key, { source, data: compiled.cachedData });
        else codeCache.delete(key);
      }
      return compiled;
    };
  }
}

module.exports = CodeCachingRuntime;
module.exports.default = CodeCachingRuntime;
