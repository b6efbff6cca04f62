#!/usr/bin/env node
// `spectator-backend`: runs the TypeScript build (`npm run build` in the repository).
const fs = require('node:fs');
const path = require('node:path');

const main = path.join(__dirname, '../dist/src/main.js');
if (!fs.existsSync(main)) {
  process.stderr.write(
    `spectator-backend: not built yet; run \`npm run build\` in ${path.resolve(__dirname, '../..')}\n`,
  );
  process.exit(1);
}
require(main);
