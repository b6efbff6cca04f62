import { ENVIRONMENT_KINDS, ROUTES, type AgentEnvironment, type EnvironmentKind } from '@spectator/shared';
import { MIN_CONSUMER_KEY_LENGTH, parseConsumerSources, type ConsumerConfig } from './observe/consumers';
import { defaultLogFormat, LOG_FORMATS, type LogFormat } from './log';

/** A validated agent configuration (see docs/agent.md for every option). */
export interface AgentConfig {
  /** Where the proxy listens (the address clients and tests send requests to). Default `0.0.0.0:4000`. */
  listen: HostPort;
  /** The app being observed. `null` only with a wrapped command: the agent then picks a free port and passes it as `PORT`. */
  upstream: URL | null;
  /** WebSocket URL of the backend's agent stream, or `null` to observe without sending. */
  backend: string | null;
  token: string | null;
  environment: AgentEnvironment;
  /** Path of service.yml. Default `./service.yml`. */
  configPath: string;
  /** Admin (health + metrics) listener, or `null` for none. */
  admin: HostPort | null;
  /** Directory keeping unacknowledged batches across restarts, or `null` for memory only. */
  spoolDir: string | null;
  /**
   * Bytes of each body copied for shape work (`--body-limit`; `--capture-limit` before). Default
   * 1 MiB; 0 counts interactions without looking at bodies.
   */
  bodyLimit: number;
  /**
   * Percent of one CPU core shape work may use beyond each endpoint and status's guaranteed sample
   * (one every 10 s). Default 2; 100 shapes every interaction whatever the load; 0 only the guaranteed ones.
   */
  shapeBudget: number;
  /** PEM files for serving the proxy over HTTPS (reloaded when they change), or `null` for plain HTTP. */
  tls: TlsFiles | null;
  /** PEM CA certificate(s) trusted for an https:// upstream besides the system's, or `null`. */
  upstreamCaPath: string | null;
  /** `-- <command>`: the app the agent starts and watches, or `null`. */
  command: string[] | null;
  logLevel: string;
  /** `json` or `pretty`; default pretty when stdout is a terminal, else json. */
  logFormat: LogFormat;
  /** Consumers named by pseudonym (`--consumer`, `--project`, `SPECTATOR_CONSUMER_KEY`), or `null` for none. */
  consumers: ConsumerConfig | null;
}

/** Where the proxy's certificate chain and private key are (PEM). */
export interface TlsFiles {
  certPath: string;
  keyPath: string;
}

export interface HostPort {
  host: string;
  port: number;
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024;
export const DEFAULT_SHAPE_BUDGET = 2;
const MAX_BODY_LIMIT = 64 * 1024 * 1024;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

type OptionKey =
  | 'listen'
  | 'upstream'
  | 'backend'
  | 'token'
  | 'env'
  | 'pr'
  | 'commit'
  | 'build'
  | 'config'
  | 'admin'
  | 'spool'
  | 'bodyLimit'
  | 'shapeBudget'
  | 'tlsCert'
  | 'tlsKey'
  | 'upstreamCa'
  | 'logLevel'
  | 'logFormat'
  | 'consumer'
  | 'project';

interface OptionSpec {
  key: OptionKey;
  flag: string;
  envVar: string;
  value: string;
  help: string;
  /** An earlier name of the option, still read (the new one wins); docs/agent.md lists it. */
  alias?: { flag: string; envVar: string };
}

/** Every option, once: parsing, environment variables and `--help` all read this table. */
export const OPTIONS: readonly OptionSpec[] = [
  {
    key: 'listen',
    flag: '--listen',
    envVar: 'SPECTATOR_LISTEN',
    value: '<host:port>',
    help: 'Where the proxy listens. Default 0.0.0.0:4000.',
  },
  {
    key: 'upstream',
    flag: '--upstream',
    envVar: 'SPECTATOR_UPSTREAM',
    value: '<url>',
    help: 'The app to forward to, e.g. http://127.0.0.1:3000. Required unless a command is given.',
  },
  {
    key: 'backend',
    flag: '--backend',
    envVar: 'SPECTATOR_BACKEND_URL',
    value: '<url>',
    help: `Backend base URL (http(s):// or ws(s)://); the agent connects to ${ROUTES.agentStream} on it. Without it nothing is sent.`,
  },
  {
    key: 'token',
    flag: '--token',
    envVar: 'SPECTATOR_TOKEN',
    value: '<token>',
    help: 'Agent token for the backend (required with --backend). Never logged.',
  },
  {
    key: 'env',
    flag: '--env',
    envVar: 'SPECTATOR_ENV',
    value: '<kind>',
    help: `Environment kind: ${ENVIRONMENT_KINDS.join('|')}. Default ci when CI is set, else local.`,
  },
  {
    key: 'pr',
    flag: '--pr',
    envVar: 'SPECTATOR_PR',
    value: '<number>',
    help: 'Pull request of a CI run. Falls back to GitHub Actions, GitLab CI, CircleCI, Buildkite and Jenkins variables.',
  },
  {
    key: 'commit',
    flag: '--commit',
    envVar: 'SPECTATOR_COMMIT',
    value: '<sha>',
    help: 'Commit being run. Falls back to GITHUB_SHA, CI_COMMIT_SHA, CIRCLE_SHA1, BUILDKITE_COMMIT, GIT_COMMIT.',
  },
  {
    key: 'build',
    flag: '--build',
    envVar: 'SPECTATOR_BUILD',
    value: '<id>',
    help: 'Build identifier (required for staging and production). Falls back to GITHUB_RUN_ID, CI_PIPELINE_ID, CIRCLE_BUILD_NUM, BUILDKITE_BUILD_NUMBER, BUILD_NUMBER.',
  },
  {
    key: 'config',
    flag: '--config',
    envVar: 'SPECTATOR_CONFIG',
    value: '<path>',
    help: 'Project configuration with ignoreRequests. Default ./service.yml; reloaded when it changes.',
  },
  {
    key: 'admin',
    flag: '--admin',
    envVar: 'SPECTATOR_ADMIN',
    value: '<[host:]port>',
    help: 'Admin port serving /healthz, /readyz and Prometheus /metrics. Default: none.',
  },
  {
    key: 'spool',
    flag: '--spool',
    envVar: 'SPECTATOR_SPOOL',
    value: '<dir>',
    help: 'Keep unacknowledged batches on disk here so an agent restart resends them. Default: memory only.',
  },
  {
    key: 'bodyLimit',
    flag: '--body-limit',
    envVar: 'SPECTATOR_BODY_LIMIT',
    alias: { flag: '--capture-limit', envVar: 'SPECTATOR_CAPTURE_LIMIT' },
    value: '<bytes>',
    help: 'Bytes of each JSON or form body kept for shape work (suffixes k, m). Default 1m; larger bodies are counted as too large. A stream (server-sent events, JSON lines) keeps its first 64k at most. 0 = count only.',
  },
  {
    key: 'shapeBudget',
    flag: '--shape-budget',
    envVar: 'SPECTATOR_SHAPE_BUDGET',
    value: '<percent>',
    help: 'Share of one CPU core that shape work may use under load, beyond one sample per endpoint and status every 10 s. Default 2. 100 shapes every interaction whatever the load (a CI run that must see every body variant); 0 only the guaranteed samples.',
  },
  {
    key: 'tlsCert',
    flag: '--tls-cert',
    envVar: 'SPECTATOR_TLS_CERT',
    value: '<path>',
    help: 'PEM certificate chain: the proxy serves HTTPS with it (and --tls-key); both files are re-read when they change. Default: plain HTTP.',
  },
  {
    key: 'tlsKey',
    flag: '--tls-key',
    envVar: 'SPECTATOR_TLS_KEY',
    value: '<path>',
    help: 'PEM private key for --tls-cert.',
  },
  {
    key: 'upstreamCa',
    flag: '--upstream-ca',
    envVar: 'SPECTATOR_UPSTREAM_CA',
    value: '<path>',
    help: 'PEM CA certificate(s) to trust for an https:// upstream, besides the system ones (e.g. an in-cluster CA).',
  },
  {
    key: 'logLevel',
    flag: '--log-level',
    envVar: 'SPECTATOR_LOG_LEVEL',
    value: '<level>',
    help: `Log level: ${LOG_LEVELS.join('|')}. Default info.`,
  },
  {
    key: 'logFormat',
    flag: '--log-format',
    envVar: 'SPECTATOR_LOG_FORMAT',
    value: '<format>',
    help: `Log lines: ${LOG_FORMATS.join('|')}. Default pretty when stdout is a terminal, else json.`,
  },
  {
    key: 'consumer',
    flag: '--consumer',
    envVar: 'SPECTATOR_CONSUMER',
    value: '<sources>',
    help: "Name each request's consumer by pseudonym, from the first of these that gives a value: jwt:sub, jwt:client_id, jwt:azp (a claim of the bearer JWT, decoded, not verified), header:<name> (an API key or client id), cert:subject (the client certificate, with --tls-cert). Needs SPECTATOR_CONSUMER_KEY (a secret of 16+ characters, from the agent's Secret; never sent) and --project. Only HMAC-SHA256 pseudonyms leave the agent. Default: none.",
  },
  {
    key: 'project',
    flag: '--project',
    envVar: 'SPECTATOR_PROJECT',
    value: '<slug>',
    help: 'The project slug consumer pseudonyms are derived for (with --consumer): one client has another pseudonym in another project.',
  },
];

/** Where CI systems put the commit, pull request and build; first match wins. */
const CI_FALLBACKS = {
  commit: ['GITHUB_SHA', 'CI_COMMIT_SHA', 'CIRCLE_SHA1', 'BUILDKITE_COMMIT', 'GIT_COMMIT'],
  build: ['GITHUB_RUN_ID', 'CI_PIPELINE_ID', 'CIRCLE_BUILD_NUM', 'BUILDKITE_BUILD_NUMBER', 'BUILD_NUMBER'],
} as const;

/** The bad options of a configuration, all of them, in one error. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid agent configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Read options from `argv` (without the node binary, script and subcommand) and `SPECTATOR_*`
 * variables in `env`; flags win over variables, variables over CI fallbacks.
 * @throws ConfigError naming every bad option.
 */
export function parseAgentConfig(argv: readonly string[], env: NodeJS.ProcessEnv): AgentConfig {
  const problems: string[] = [];
  const { values, command } = readArgv(argv, problems);
  const raw = (key: OptionKey): string | undefined => {
    const spec = OPTIONS.find((option) => option.key === key);
    const fromEnv = spec ? (nonEmpty(env[spec.envVar]) ?? nonEmpty(env[spec.alias?.envVar ?? ''])) : undefined;
    return values.get(key) ?? fromEnv;
  };
  const named = (key: OptionKey): string => {
    const spec = OPTIONS.find((option) => option.key === key);
    if (!spec) return key;
    return spec.alias
      ? `${spec.flag} (${spec.envVar}; formerly ${spec.alias.flag}, ${spec.alias.envVar})`
      : `${spec.flag} (${spec.envVar})`;
  };
  const check = <T>(key: OptionKey, parse: (text: string) => T, fallback: T): T => {
    const text = raw(key);
    if (text === undefined) return fallback;
    try {
      return parse(text);
    } catch (err) {
      problems.push(`${named(key)}: ${(err as Error).message}`);
      return fallback;
    }
  };

  const listen = check('listen', (text) => parseHostPort(text, '0.0.0.0'), { host: '0.0.0.0', port: 4000 });
  const upstream = check('upstream', parseUpstream, null);
  if (upstream === null && command === null && raw('upstream') === undefined)
    problems.push(`${named('upstream')}: required (or give a command after --)`);
  const backend = check('backend', parseBackend, null);
  const token = nonEmpty(raw('token')) ?? null;
  if (backend !== null && token === null) problems.push(`${named('token')}: required with --backend`);
  const kind = check('env', parseEnvironmentKind, nonEmpty(env.CI) && env.CI !== 'false' ? 'ci' : 'local');
  const environment: AgentEnvironment = { kind };
  const pullRequest = check('pr', parsePullRequest, undefined) ?? pullRequestFromCi(env);
  const commit = raw('commit') ?? firstOf(env, CI_FALLBACKS.commit);
  const build = raw('build') ?? firstOf(env, CI_FALLBACKS.build);
  if (pullRequest !== undefined) environment.pullRequest = pullRequest;
  if (commit !== undefined) environment.commit = commit;
  if (build !== undefined) environment.build = build;
  if ((kind === 'staging' || kind === 'production') && build === undefined)
    problems.push(`${named('build')}: required for --env ${kind} (${kind} is identified by build)`);
  const admin = check('admin', (text) => parseHostPort(text, '0.0.0.0'), null);
  const bodyLimit = check('bodyLimit', parseByteSize, DEFAULT_BODY_LIMIT);
  const shapeBudget = check('shapeBudget', parsePercent, DEFAULT_SHAPE_BUDGET);
  const logLevel = check('logLevel', (text) => oneOf(text, LOG_LEVELS), 'info');
  const logFormat = check('logFormat', (text) => oneOf(text, LOG_FORMATS), defaultLogFormat());
  const [certPath, keyPath] = [nonEmpty(raw('tlsCert')), nonEmpty(raw('tlsKey'))];
  if ((certPath === undefined) !== (keyPath === undefined))
    problems.push(
      `${named(certPath === undefined ? 'tlsCert' : 'tlsKey')}: required with ${certPath === undefined ? '--tls-key' : '--tls-cert'}`,
    );

  const consumers = consumerConfig(
    check<ConsumerConfig['sources'] | null>('consumer', parseConsumerSources, null),
    raw('consumer') !== undefined,
    nonEmpty(raw('project')),
    env.SPECTATOR_CONSUMER_KEY,
    certPath !== undefined,
    problems,
  );

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    listen,
    upstream,
    backend,
    token,
    environment,
    configPath: raw('config') ?? './service.yml',
    admin,
    spoolDir: raw('spool') ?? null,
    bodyLimit,
    shapeBudget,
    tls: certPath !== undefined && keyPath !== undefined ? { certPath, keyPath } : null,
    upstreamCaPath: nonEmpty(raw('upstreamCa')) ?? null,
    command,
    logLevel,
    logFormat,
    consumers,
  };
}

/** Consumer identification from its options, or null without `--consumer`; problems named. */
function consumerConfig(
  sources: ConsumerConfig['sources'] | null,
  asked: boolean,
  project: string | undefined,
  key: string | undefined,
  tls: boolean,
  problems: string[],
): ConsumerConfig | null {
  if (!asked) return null;
  const before = problems.length;
  if (key === undefined || key.length < MIN_CONSUMER_KEY_LENGTH)
    problems.push(
      `SPECTATOR_CONSUMER_KEY: required with --consumer (SPECTATOR_CONSUMER), a secret of at least ${MIN_CONSUMER_KEY_LENGTH} characters`,
    );
  if (project === undefined)
    problems.push('--project (SPECTATOR_PROJECT): required with --consumer (SPECTATOR_CONSUMER)');
  if (sources?.some((source) => source.kind === 'cert') && !tls)
    problems.push('--consumer (SPECTATOR_CONSUMER): cert:subject needs --tls-cert (the agent must terminate TLS)');
  if (sources === null || problems.length > before) return null;
  return { sources, key: key as string, project: project as string };
}

/** `--help` text, generated from OPTIONS. */
export function helpText(version: string): string {
  const width = Math.max(...OPTIONS.map((option) => `${option.flag} ${option.value}`.length));
  const lines = OPTIONS.map(
    (option) =>
      `  ${`${option.flag} ${option.value}`.padEnd(width)}  ${option.help}\n  ${''.padEnd(width)}  env: ${option.envVar}` +
      (option.alias ? ` (also read: ${option.alias.flag}, ${option.alias.envVar})` : ''),
  );
  return [
    `spectator-agent ${version}: a sidecar proxy that observes an API's traffic as shapes (never values) and streams them to the Spectator backend.`,
    '',
    'Usage:',
    '  spectator-agent [run] [options] [-- <command> [args...]]',
    '  spectator-agent check [options]     the CI gate (spectator-agent check --help)',
    "  spectator-agent consumer-id <value> a consumer's pseudonym, computed here (spectator-agent consumer-id --help)",
    '  spectator-agent --help | --version',
    '',
    'With -- <command> the agent starts the app itself (PORT is set to the upstream port, and {PORT} in',
    'its arguments is replaced), forwards signals, restarts it when it exits (SIGHUP restarts it too),',
    'and starts a new capture each time.',
    '',
    'Options (each also an environment variable; flags win):',
    ...lines,
    `  ${'--help'.padEnd(width)}  Print this help.`,
    `  ${'--version'.padEnd(width)}  Print the agent version.`,
    '',
  ].join('\n');
}

function readArgv(
  argv: readonly string[],
  problems: string[],
): { values: Map<OptionKey, string>; command: string[] | null } {
  const values = new Map<OptionKey, string>();
  const byOwnFlag = new Set<OptionKey>();
  let command: string[] | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      command = argv.slice(i + 1);
      if (command.length === 0) problems.push('--: a command must follow --');
      break;
    }
    const equals = arg.indexOf('=');
    const flag = equals > 0 ? arg.slice(0, equals) : arg;
    const spec = OPTIONS.find((option) => option.flag === flag || option.alias?.flag === flag);
    if (!spec) {
      problems.push(
        arg.startsWith('-')
          ? `${flag}: unknown option (see --help)`
          : `${arg}: unexpected argument (a command goes after --)`,
      );
      continue;
    }
    const value = equals > 0 ? arg.slice(equals + 1) : argv[++i];
    if (value === undefined || (equals < 0 && value.startsWith('--'))) {
      problems.push(`${flag}: needs a value ${spec.value}`);
      if (value !== undefined) i--;
      continue;
    }
    // An option's own flag wins over its earlier name (alias), wherever each stands.
    if (flag === spec.flag) byOwnFlag.add(spec.key);
    else if (byOwnFlag.has(spec.key)) continue;
    values.set(spec.key, value);
  }
  return { values, command };
}

/** `host:port`, `[v6]:port`, `:port` or `port`. */
export function parseHostPort(text: string, defaultHost: string): HostPort {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]*):)?(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) throw new Error(`"${text}" is not host:port, :port or a port number 0-65535`);
  const host = match[1] ? match[1].replace(/^\[|\]$/g, '') : defaultHost;
  return { host, port };
}

/** An http(s) origin to forward to. */
export function parseUpstream(text: string): URL {
  const url = parseUrl(text);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`"${text}" must be an http:// or https:// URL`);
  if (url.search || url.hash || (url.pathname !== '/' && url.pathname !== ''))
    throw new Error(`"${text}" must be an origin without path, query or fragment`);
  return url;
}

/**
 * The backend's agent stream URL: http→ws, https→wss, base path kept, the stream route appended
 * (a URL already ending in it is kept as is).
 */
export function parseBackend(text: string): string {
  const url = parseUrl(text);
  const schemes: Record<string, string> = { 'http:': 'ws:', 'https:': 'wss:', 'ws:': 'ws:', 'wss:': 'wss:' };
  const scheme = schemes[url.protocol];
  if (!scheme) throw new Error(`"${text}" must be an http(s):// or ws(s):// URL`);
  if (url.search || url.hash) throw new Error(`"${text}" must not have a query or fragment`);
  url.protocol = scheme;
  const base = url.pathname.replace(/\/+$/, '');
  if (!base.endsWith(ROUTES.agentStream)) url.pathname = `${base}${ROUTES.agentStream}`;
  return url.toString();
}

function parseEnvironmentKind(text: string): EnvironmentKind {
  return oneOf(text, ENVIRONMENT_KINDS);
}

function parsePullRequest(text: string): string {
  if (!/^\d+$/.test(text)) throw new Error(`"${text}" is not a pull request number`);
  return text;
}

/** Bytes with an optional k/m suffix (binary: 1k = 1024). */
export function parseByteSize(text: string): number {
  const match = /^(\d+)\s*(k|kb|kib|m|mb|mib)?$/i.exec(text.trim());
  if (!match) throw new Error(`"${text}" is not a size in bytes (e.g. 1048576, 512k, 1m)`);
  const unit = (match[2] ?? '').toLowerCase();
  const bytes = Number(match[1]) * (unit.startsWith('k') ? 1024 : unit.startsWith('m') ? 1024 * 1024 : 1);
  if (bytes > MAX_BODY_LIMIT) throw new Error(`"${text}" is above the maximum of 64m`);
  return bytes;
}

/** A percentage from 0 to 100 (a decimal point allowed, a `%` sign too). */
export function parsePercent(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*%?$/.exec(text.trim());
  const percent = match ? Number(match[1]) : NaN;
  if (!(percent >= 0 && percent <= 100)) throw new Error(`"${text}" is not a percentage from 0 to 100`);
  return percent;
}

function oneOf<T extends string>(text: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(text)) throw new Error(`"${text}" must be one of ${allowed.join(', ')}`);
  return text as T;
}

function parseUrl(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new Error(`"${text}" is not a URL`);
  }
}

/** The pull request number from the usual CI variables, when the run is for one. */
export function pullRequestFromCi(env: NodeJS.ProcessEnv): string | undefined {
  const candidates = [
    /^refs\/pull\/(\d+)\//.exec(env.GITHUB_REF ?? '')?.[1],
    env.CI_MERGE_REQUEST_IID,
    env.CIRCLE_PR_NUMBER,
    /\/pull\/(\d+)/.exec(env.CIRCLE_PULL_REQUEST ?? '')?.[1],
    env.BUILDKITE_PULL_REQUEST,
    env.CHANGE_ID,
  ];
  return candidates.find((value): value is string => value !== undefined && /^\d+$/.test(value));
}

function firstOf(env: NodeJS.ProcessEnv, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = nonEmpty(env[name]);
    if (value !== undefined) return value;
  }
  return undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
