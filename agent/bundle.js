// @ts-check
// Builds the agent into one file with esbuild.
//   node bundle.js package   dist/spectator-agent.cjs: the agent and @spectator/shared (which is
//                            not published) in one file; its npm dependencies stay outside and are
//                            installed with the package. `npm pack` runs this (prepack).
//   node bundle.js image     dist/image/spectator-agent.cjs: everything in one file, for the
//                            container image, which then needs no node_modules.
//   node bundle.js <kind> <file>   the same, written to <file> (tests build their own copy).
const path = require('node:path');
const esbuild = require('esbuild');
const pkg = require('./package.json');

const kind = process.argv[2];
if (kind !== 'package' && kind !== 'image') {
  process.stderr.write('usage: node bundle.js package|image [file]\n');
  process.exit(2);
}

esbuild.buildSync({
  entryPoints: [path.join(__dirname, 'src/package.ts')],
  outfile: process.argv[3]
    ? path.resolve(process.argv[3])
    : path.join(__dirname, kind === 'package' ? 'dist/spectator-agent.cjs' : 'dist/image/spectator-agent.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  // The oldest Node the agent supports (package.json engines).
  target: `node${/\d+/.exec(pkg.engines.node)?.[0]}`,
  // The image's file has no package.json beside it to read the version from.
  define: { SPECTATOR_AGENT_VERSION: JSON.stringify(pkg.version) },
  minifySyntax: true,
  minifyWhitespace: true,
  // The package's dependencies are installed beside it; ws's native helpers are optional either way.
  external: [...(kind === 'package' ? Object.keys(pkg.dependencies) : []), 'bufferutil', 'utf-8-validate'],
  // @spectator/shared from its sources, as the tests and tsc see it.
  alias: { '@spectator/shared': path.join(__dirname, '../shared/src/index.ts') },
  logLevel: 'warning',
});
