#!/usr/bin/env node
// `spectator-agent`. The published package runs its one-file build (dist/spectator-agent.cjs, made
// by `npm pack`); in a clone of the repository it runs the TypeScript build (`npm run build`).
const fs = require('node:fs');
const path = require('node:path');

const bundle = path.join(__dirname, '../dist/spectator-agent.cjs');
const compiled = path.join(__dirname, '../dist/src/cli.js');
const entry = [bundle, compiled].find((file) => fs.existsSync(file));
if (!entry) {
  process.stderr.write(
    `spectator-agent: not built yet; run \`npm run build\` in ${path.resolve(__dirname, '../..')}\n`,
  );
  process.exit(1);
}
require(entry).run();
