// rxjs for jest, each export required on first use (barrel.js says why).
'use strict';
module.exports = require('./barrel').lazyBarrel('rxjs/dist/cjs/index.js', exports);
