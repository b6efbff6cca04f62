// The deploy project: tests of the images, manifests, compose file, CI workflow, docs and `npm start`.
module.exports = { testTimeout: 30_000 };
