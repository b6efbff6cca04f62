#!/usr/bin/env node
// `spectator-agent`. The published package runs its one-file build (dist/spectator-agent.cjs, made
// by `npm pack`); in a clone of the repository it runs the TypeScript build (`npm run build`),
// first: a test packing the agent (`npm pack` writes the bundle, then removes it) must not change
// what another test running the repository's agent at the same time gets, or remove it under it.
const fs = require('node:fs');
const path = require('node:path');

const bundle = path.join(__dirname, '../dist/spectator-agent.cjs');
const compiled = path.join(__dirname, '../dist/src/cli.js');
const entry = [compiled, bundle].find((file) => fs.existsSync(file));
if (!entry) {
  process.stderr.write(
    `spectator-agent: not built yet; run \`npm run build\` in ${path.resolve(__dirname, '../..')}\n`,
  );
  process.exit(1);
}
require(entry).run();
