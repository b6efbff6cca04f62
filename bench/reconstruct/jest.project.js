// The reconstruction bench's scoring and traffic planning, on small fixtures. Only its own lib and
// test folders are looked at (its node_modules, installed by the bench itself, holds thousands of files).
module.exports = { roots: ['<rootDir>/lib', '<rootDir>/test'] };
