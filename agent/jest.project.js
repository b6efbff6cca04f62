// The agent's tests run real servers, proxies and load bursts; on a loaded CI machine (the whole
// workspace's suites in parallel on two cores) some take several seconds. A test that hangs still fails.
module.exports = { testTimeout: 20_000 };
