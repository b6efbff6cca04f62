// Entry of the one-file builds (bundle.js): the library and the command in one file. The bin calls
// `run()`; `node spectator-agent.cjs` runs it by itself (cli.ts checks require.main).
export * from './index';
export { main, run } from './cli';
