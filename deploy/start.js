// `npm start`: runs the whole product locally. Filled in as the parts land (issue 7).
console.error('Spectator: the local demo is not assembled yet (see issue 7). `npm test` runs the test suite.');
process.exit(1);
