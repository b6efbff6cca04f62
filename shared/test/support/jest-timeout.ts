// `testTimeout` is a global jest option (ignored per project, so shared tests ran with jest's 5 s):
// the learner's and the shapes' tests replay thousands of exchanges, some seconds each on a busy
// 2-core machine (the whole workspace's suites in parallel). A test that hangs still fails.
jest.setTimeout(120_000);
