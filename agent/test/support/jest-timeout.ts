// `testTimeout` is a global jest option (ignored per project, so agent tests ran with jest's 5 s):
// the agent's tests run real servers, proxies and load bursts, and on a loaded machine (the whole
// workspace's suites in parallel on two cores) some take several seconds. A test that hangs still fails.
jest.setTimeout(120_000);
