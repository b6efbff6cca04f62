// `testTimeout` is a global jest option (ignored per project); integration tests here start real
// servers and databases on a busy 2-core machine, so this project sets its own.
jest.setTimeout(120_000);
