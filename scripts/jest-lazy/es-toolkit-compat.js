// es-toolkit/compat for jest, each function required on first use (barrel.js says why). `default`
// (the lodash-like object) and `partial`/`partialRight` (whose placeholder that object sets) come
// from the whole index; its bare `require("./compat.js")` only builds the namespace object.
'use strict';
module.exports = require('./barrel').lazyBarrel('es-toolkit/dist/compat/index.js', exports, {
  whole: ['default', 'partial', 'partialRight'],
  inertRequires: ['./compat.js'],
});
