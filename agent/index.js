// `require('@spectator/agent')`: the published package's one-file build (dist/spectator-agent.cjs,
// made by `npm pack`), or in the repository the TypeScript build (first, as bin/spectator-agent.js).
const fs = require('node:fs');
const path = require('node:path');

const compiled = path.join(__dirname, 'dist/src/index.js');
module.exports = require(fs.existsSync(compiled) ? compiled : './dist/spectator-agent.cjs');
