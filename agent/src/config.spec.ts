import { ConfigError, OPTIONS, helpText, parseAgentConfig, parseByteSize, parseHostPort, parsePercent } from './config';

const base = ['--upstream', 'http://127.0.0.1:3000'];

describe('parseAgentConfig', () => {
  it('applies the documented defaults', () => {
    expect(parseAgentConfig(base, {})).toEqual({
      listen: { host: '0.0.0.0', port: 4000 },
      upstream: new URL('http://127.0.0.1:3000'),
      backend: null,
      token: null,
      environment: { kind: 'local' },
      configPath: './service.yml',
      admin: null,
      spoolDir: null,
      bodyLimit: 1024 * 1024,
      shapeBudget: 2,
      tls: null,
      upstreamCaPath: null,
      command: null,
      logLevel: 'info',
      // Jest's stdout is not a terminal.
      logFormat: process.stdout.isTTY ? 'pretty' : 'json',
      consumers: null,
    });
  });

  it('names consumers with --consumer, --project and SPECTATOR_CONSUMER_KEY, and names what is missing', () => {
    const key = 'a-secret-of-sixteen+';
    expect(
      parseAgentConfig([...base, '--consumer', 'jwt:client_id, header:X-Api-Key', '--project', 'shop'], {
        SPECTATOR_CONSUMER_KEY: key,
      }).consumers,
    ).toEqual({
      sources: [
        { kind: 'jwt', claim: 'client_id' },
        { kind: 'header', name: 'x-api-key' },
      ],
      key,
      project: 'shop',
    });
    expect(
      parseAgentConfig(base, { SPECTATOR_CONSUMER: 'jwt:sub', SPECTATOR_PROJECT: 'p', SPECTATOR_CONSUMER_KEY: key })
        .consumers?.sources,
    ).toEqual([{ kind: 'jwt', claim: 'sub' }]);
    const problems = (argv: string[], env: NodeJS.ProcessEnv): string[] => {
      try {
        parseAgentConfig([...base, ...argv], env);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems(['--consumer', 'jwt:sub'], {})).toEqual([
      'SPECTATOR_CONSUMER_KEY: required with --consumer (SPECTATOR_CONSUMER), a secret of at least 16 characters',
      '--project (SPECTATOR_PROJECT): required with --consumer (SPECTATOR_CONSUMER)',
    ]);
    expect(problems(['--consumer', 'jwt:email', '--project', 'p'], { SPECTATOR_CONSUMER_KEY: key })).toEqual([
      '--consumer (SPECTATOR_CONSUMER): "jwt:email" is not a consumer source (jwt:sub, jwt:client_id, jwt:azp, header:<name>, cert:subject)',
    ]);
    expect(problems(['--consumer', 'cert:subject', '--project', 'p'], { SPECTATOR_CONSUMER_KEY: 'short' })).toEqual([
      'SPECTATOR_CONSUMER_KEY: required with --consumer (SPECTATOR_CONSUMER), a secret of at least 16 characters',
      '--consumer (SPECTATOR_CONSUMER): cert:subject needs --tls-cert (the agent must terminate TLS)',
    ]);
  });

  it('takes --log-format json|pretty, and refuses another', () => {
    expect(parseAgentConfig([...base, '--log-format', 'pretty'], {}).logFormat).toBe('pretty');
    expect(parseAgentConfig(base, { SPECTATOR_LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(() => parseAgentConfig([...base, '--log-format', 'text'], {})).toThrow(
      '--log-format (SPECTATOR_LOG_FORMAT): "text" must be one of json, pretty',
    );
  });

  it.each([
    ['http://backend:8080', 'ws://backend:8080/api/v1/agents/stream'],
    ['https://spectator.example.com/', 'wss://spectator.example.com/api/v1/agents/stream'],
    ['ws://backend/base', 'ws://backend/base/api/v1/agents/stream'],
    ['wss://backend/api/v1/agents/stream', 'wss://backend/api/v1/agents/stream'],
  ])('turns --backend %s into the stream URL %s', (backend, url) => {
    expect(parseAgentConfig([...base, '--backend', backend, '--token', 't'], {}).backend).toBe(url);
  });

  it('reads every option from SPECTATOR_* variables, flags winning', () => {
    const config = parseAgentConfig(['--env', 'staging'], {
      SPECTATOR_LISTEN: ':8080',
      SPECTATOR_UPSTREAM: 'http://app:3000',
      SPECTATOR_BACKEND_URL: 'http://backend',
      SPECTATOR_TOKEN: 'tok',
      SPECTATOR_ENV: 'production',
      SPECTATOR_PR: '12',
      SPECTATOR_COMMIT: 'abc',
      SPECTATOR_BUILD: '77',
      SPECTATOR_CONFIG: '/etc/service.yml',
      SPECTATOR_ADMIN: '4001',
      SPECTATOR_SPOOL: '/var/spool',
      SPECTATOR_BODY_LIMIT: '512k',
      SPECTATOR_SHAPE_BUDGET: '100',
      SPECTATOR_LOG_LEVEL: 'warn',
      SPECTATOR_TLS_CERT: '/tls/tls.crt',
      SPECTATOR_TLS_KEY: '/tls/tls.key',
      SPECTATOR_UPSTREAM_CA: '/tls/ca.crt',
    });
    expect(config).toMatchObject({
      listen: { host: '0.0.0.0', port: 8080 },
      token: 'tok',
      environment: { kind: 'staging', pullRequest: '12', commit: 'abc', build: '77' },
      configPath: '/etc/service.yml',
      admin: { host: '0.0.0.0', port: 4001 },
      spoolDir: '/var/spool',
      bodyLimit: 512 * 1024,
      shapeBudget: 100,
      tls: { certPath: '/tls/tls.crt', keyPath: '/tls/tls.key' },
      upstreamCaPath: '/tls/ca.crt',
      logLevel: 'warn',
    });
  });

  it.each([
    [
      'GitHub Actions',
      { GITHUB_SHA: 'g1', GITHUB_REF: 'refs/pull/42/merge', GITHUB_RUN_ID: '900' },
      { pullRequest: '42', commit: 'g1', build: '900' },
    ],
    [
      'GitLab CI',
      { CI_COMMIT_SHA: 'l1', CI_MERGE_REQUEST_IID: '7', CI_PIPELINE_ID: '55' },
      { pullRequest: '7', commit: 'l1', build: '55' },
    ],
    [
      'CircleCI',
      { CIRCLE_SHA1: 'c1', CIRCLE_PULL_REQUEST: 'https://github.com/o/r/pull/9', CIRCLE_BUILD_NUM: '3' },
      { pullRequest: '9', commit: 'c1', build: '3' },
    ],
    [
      'Buildkite',
      { BUILDKITE_COMMIT: 'b1', BUILDKITE_PULL_REQUEST: '11', BUILDKITE_BUILD_NUMBER: '4' },
      { pullRequest: '11', commit: 'b1', build: '4' },
    ],
    ['Buildkite without a PR', { BUILDKITE_COMMIT: 'b1', BUILDKITE_PULL_REQUEST: 'false' }, { commit: 'b1' }],
    [
      'Jenkins',
      { GIT_COMMIT: 'j1', CHANGE_ID: '5', BUILD_NUMBER: '6' },
      { pullRequest: '5', commit: 'j1', build: '6' },
    ],
  ])('falls back to %s variables, and CI=true means --env ci', (_name, env, expected) => {
    expect(parseAgentConfig(base, { CI: 'true', ...env }).environment).toEqual({ kind: 'ci', ...expected });
  });

  it('takes the command after --', () => {
    const config = parseAgentConfig(['--env=ci', '--', 'npm', 'start', '--port', '{PORT}'], {});
    expect(config.command).toEqual(['npm', 'start', '--port', '{PORT}']);
    expect(config.upstream).toBeNull();
  });

  it('reads --capture-limit and SPECTATOR_CAPTURE_LIMIT, the earlier names of --body-limit; the new name wins', () => {
    const base = ['--upstream', 'http://127.0.0.1:3000'];
    expect(parseAgentConfig([...base, '--capture-limit', '2k'], {}).bodyLimit).toBe(2048);
    expect(parseAgentConfig(base, { SPECTATOR_CAPTURE_LIMIT: '3k' }).bodyLimit).toBe(3072);
    expect(parseAgentConfig(base, { SPECTATOR_CAPTURE_LIMIT: '3k', SPECTATOR_BODY_LIMIT: '4k' }).bodyLimit).toBe(4096);
    for (const flags of [
      ['--body-limit', '5k', '--capture-limit', '6k'],
      ['--capture-limit', '6k', '--body-limit', '5k'],
    ])
      expect(parseAgentConfig([...base, ...flags], { SPECTATOR_BODY_LIMIT: '4k' }).bodyLimit).toBe(5120);
  });

  it('names every problem in one error', () => {
    let error: unknown;
    try {
      parseAgentConfig(
        [
          '--listen',
          'x:y',
          '--upstream',
          'http://a/path',
          '--backend',
          'http://b',
          '--env',
          'production',
          '--pr',
          'abc',
          '--body-limit',
          '1g',
          '--shape-budget',
          '150',
          '--admin',
          '70000',
          '--tls-cert',
          '/tls/tls.crt',
          '--nope',
          'stray',
          '--spool',
        ],
        {},
      );
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      '--nope: unknown option (see --help)',
      'stray: unexpected argument (a command goes after --)',
      '--spool: needs a value <dir>',
      '--listen (SPECTATOR_LISTEN): "x:y" is not host:port, :port or a port number 0-65535',
      '--upstream (SPECTATOR_UPSTREAM): "http://a/path" must be an origin without path, query or fragment',
      '--token (SPECTATOR_TOKEN): required with --backend',
      '--pr (SPECTATOR_PR): "abc" is not a pull request number',
      '--build (SPECTATOR_BUILD): required for --env production (production is identified by build)',
      '--admin (SPECTATOR_ADMIN): "70000" is not host:port, :port or a port number 0-65535',
      '--body-limit (SPECTATOR_BODY_LIMIT; formerly --capture-limit, SPECTATOR_CAPTURE_LIMIT): "1g" is not a size in bytes (e.g. 1048576, 512k, 1m)',
      '--shape-budget (SPECTATOR_SHAPE_BUDGET): "150" is not a percentage from 0 to 100',
      '--tls-key (SPECTATOR_TLS_KEY): required with --tls-cert',
    ]);
    expect((error as Error).message).toContain('invalid agent configuration');
  });

  it('documents every option in --help', () => {
    const help = helpText('1.2.3');
    for (const option of OPTIONS) expect(help).toContain(option.envVar);
    expect(help).toContain('also read: --capture-limit, SPECTATOR_CAPTURE_LIMIT');
  });
});

describe('parsers', () => {
  it.each([
    ['4000', { host: '0.0.0.0', port: 4000 }],
    [':0', { host: '0.0.0.0', port: 0 }],
    ['127.0.0.1:4000', { host: '127.0.0.1', port: 4000 }],
    ['[::1]:4000', { host: '::1', port: 4000 }],
  ])('host:port %s', (text, expected) => expect(parseHostPort(text, '0.0.0.0')).toEqual(expected));

  it.each([
    ['1048576', 1048576],
    ['1m', 1048576],
    ['512KiB', 524288],
    ['0', 0],
  ])('byte size %s', (text, bytes) => expect(parseByteSize(text)).toBe(bytes));

  it('refuses a body limit above 64m', () => expect(() => parseByteSize('65m')).toThrow('above the maximum'));

  it.each([
    ['2', 2],
    ['0.5', 0.5],
    ['100%', 100],
    ['0', 0],
  ])('percentage %s', (text, percent) => expect(parsePercent(text)).toBe(percent));

  it.each(['-1', '101', 'half', '', '1e2'])('refuses %j as a percentage', (text) =>
    expect(() => parsePercent(text)).toThrow('is not a percentage from 0 to 100'),
  );
});
