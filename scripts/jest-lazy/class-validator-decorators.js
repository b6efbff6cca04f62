// class-validator's decorators for jest, each required on first use (barrel.js says why; resolver.js
// maps class-validator's own `require("./decorator/decorators")` here). Its index `export *`s 113
// modules, which require validator's whole index (IsStrongPassword) and libphonenumber-js
// (IsPhoneNumber): some 300 modules, of which the backend's DTOs use about 20 decorators.
'use strict';
module.exports = require('./barrel').lazyBarrel('class-validator/cjs/decorator/decorators.js', exports, {
  lazyStars: true,
});
