// rxjs/operators for jest, each operator required on first use (barrel.js says why).
'use strict';
module.exports = require('./barrel').lazyBarrel('rxjs/dist/cjs/operators/index.js', exports);
