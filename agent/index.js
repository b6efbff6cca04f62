// `require('@spectator/agent')`: the published package's one-file build (dist/spectator-agent.cjs,
// made by `npm pack`), or in the repository the TypeScript build.
const fs = require('node:fs');
const path = require('node:path');

const bundle = path.join(__dirname, 'dist/spectator-agent.cjs');
module.exports = require(fs.existsSync(bundle) ? bundle : './dist/src/index.js');
