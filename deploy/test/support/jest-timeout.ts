// `testTimeout` is a global jest option (ignored per project, so deploy tests ran with jest's 5 s):
// these tests start real processes, builds and databases on a busy 2-core machine.
jest.setTimeout(120_000);
