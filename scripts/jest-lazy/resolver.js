// jest's resolver (jest.config.js: `resolver`), with one module of a library replaced: where
// class-validator's index requires its decorators' index, class-validator-decorators.js, which
// requires each decorator on first use. The index itself runs as it is (its own validate and the
// rest, its other `export *`s), and copies the getters it is given (tsc's __exportStar keeps a
// getter of an ES module as it is). Anything else resolves as jest would.
'use strict';
const path = require('node:path');

const CLASS_VALIDATOR = path.join(__dirname, '../../node_modules/class-validator/cjs');
const DECORATORS = path.join(__dirname, 'class-validator-decorators.js');

/**
 * @param {string} request
 * @param {{basedir: string, defaultResolver: (request: string, options: object) => string}} options
 * @returns {string}
 */
module.exports = (request, options) =>
  request === './decorator/decorators' && options.basedir === CLASS_VALIDATOR
    ? DECORATORS
    : options.defaultResolver(request, options);
