import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseAllowList } from '../common/ip-range';
import { type OidcConfig, type OidcOptions, parseOidc, RECHECK_MINUTES } from './oidc';

/** Options a caller may pass to `startBackend`; each overrides its environment variable. */
export interface BackendOptions {
  port?: number;
  host?: string;
  databaseUrl?: string;
  dataDir?: string;
  adminToken?: string;
  runMigrations?: boolean;
  dashboardDir?: string;
  logLevel?: string;
  /** Largest agent message accepted, in bytes (default 4 MiB). */
  maxMessageBytes?: number;
  /** Bytes of agent messages read and not yet handled, all connections together, past which reading stops (default 64 MiB). */
  maxQueuedBytes?: number;
  /** Endpoints (method, path) one capture keeps at most; requests of further ones are counted as overflow (default 20,000). */
  maxEndpointsPerCapture?: number;
  /** Agent stream connections one replica keeps at most (default 1,000). */
  maxAgentConnections?: number;
  /** Agent stream connections of one project one replica keeps at most (default 100). */
  maxAgentConnectionsPerProject?: number;
  /** Days a committed batch id is remembered for duplicate detection (default 30). */
  batchRetentionDays?: number;
  /** Days a capture is kept after its last traffic (default 90; 0 keeps captures forever). */
  captureRetentionDays?: number;
  /** Seconds between checks that open WebSockets' tokens are still valid (default 30). */
  tokenCheckSeconds?: number;
  /** Non-public addresses (CIDR ranges) webhook deliveries may reach (default none). */
  webhookAllow?: string[];
  /** Bearer token `/metrics` asks for (default: none, so `/metrics` answers 404). */
  metricsToken?: string;
  /** The dashboard's public address, for links in chat messages and feeds (default none). */
  publicUrl?: string;
  /** Single sign-on (instead of SPECTATOR_OIDC_*). */
  oidc?: OidcOptions;
  /** Hours a person's session lasts from sign-in (default 12). */
  sessionHours?: number;
  /** Days each resolution of runtime evidence is kept (instead of SPECTATOR_RUNTIME_*_DAYS). */
  runtimeRetention?: Partial<RuntimeRetention>;
  /** Seconds between roll-ups of folded runtime minutes into their rows (instead of SPECTATOR_RUNTIME_ROLLUP_SECONDS). */
  runtimeRollupSeconds?: number;
  /** Seconds a database connection may sit idle in a pool before it is closed; 0 keeps it (instead of SPECTATOR_DATABASE_IDLE_SECONDS). */
  databaseIdleSeconds?: number;
  /**
   * Whether each database pool opens all its connections at start, the batch statement prepared on
   * every batch writer's (default true). Off, they open as they are asked for: the test helpers'
   * default, since it costs each start ~150 ms of PostgreSQL CPU (the statement's plans).
   */
  openPoolsAtStart?: boolean;
}

/**
 * How long runtime evidence is kept at each resolution, in days: minute rows for `minuteDays`,
 * then moved into hour rows; hour rows for `hourDays`, then moved into day rows; day rows for
 * `dayDays`, then deleted. Each is at least the one before.
 */
export interface RuntimeRetention {
  minuteDays: number;
  hourDays: number;
  dayDays: number;
}

/** Runtime retention by default: minutes for two days, hours for 35, days for 400 (a year and a month). */
export const DEFAULT_RUNTIME_RETENTION: RuntimeRetention = { minuteDays: 2, hourDays: 35, dayDays: 400 };

/** The validated configuration, parsed once at boot. */
export interface BackendConfig {
  port: number;
  host: string;
  /** `null`: start an embedded PostgreSQL under `dataDir/pg`. */
  databaseUrl: string | null;
  dataDir: string;
  /** `null`: use the token generated at first start (printed once, kept in `dataDir/admin-token`). */
  adminToken: string | null;
  runMigrations: boolean;
  dashboardDir: string;
  logLevel: string;
  maxMessageBytes: number;
  /**
   * Bytes of agent messages read and not yet handled, all connections together: past it the
   * replica stops reading from agent sockets (TCP backpressure) until half of it is handled.
   */
  maxQueuedBytes: number;
  /** Endpoints (method, path) one capture keeps at most; the requests of further endpoints are counted (`overflow`), not stored. */
  maxEndpointsPerCapture: number;
  /** Agent stream connections a replica keeps at most; a further one is closed at once (1013) with the reason. */
  maxAgentConnections: number;
  /** The same per project (each connection holds buffers and a session: one project cannot take them all). */
  maxAgentConnectionsPerProject: number;
  /**
   * Committed batch ids older than this many days are pruned; an agent resending a batch later
   * than that would have it counted twice. Agents resend only what is still in their spool.
   */
  batchRetentionDays: number;
  /** Captures whose last traffic is older than this many days are deleted (with their observations); 0 keeps them. */
  captureRetentionDays: number;
  /** Open WebSockets whose token was revoked or expired are closed within this many seconds. */
  tokenCheckSeconds: number;
  /** CIDR ranges of non-public addresses webhook deliveries may reach (SPECTATOR_WEBHOOK_ALLOW). */
  webhookAllow: string[];
  /** `/metrics` answers only `Authorization: Bearer <this>`; `null`: it is not served (SPECTATOR_METRICS_TOKEN). */
  metricsToken: string | null;
  /**
   * Where people open the dashboard (`SPECTATOR_PUBLIC_URL`, an http(s) URL without a trailing
   * slash), for links in chat messages and the changelog feed; `null`: messages carry no link.
   */
  publicUrl: string | null;
  /** Single sign-on through an OpenID Connect provider; `null`: people sign in with tokens only. */
  oidc: OidcConfig | null;
  /** A person's session ends this many hours after sign-in (SPECTATOR_SESSION_HOURS, default 12). */
  sessionHours: number;
  /** Days runtime evidence is kept per resolution (SPECTATOR_RUNTIME_MINUTE_DAYS, _HOUR_DAYS, _DAY_DAYS). */
  runtimeRetention: RuntimeRetention;
  /**
   * Seconds between a replica's roll-ups of the minutes folds added into their minute, hour and day
   * rows (SPECTATOR_RUNTIME_ROLLUP_SECONDS, default 60, 1–3600): longer writes each row less often;
   * reads add the minutes still waiting of the endpoints they read (found by endpoint), so every
   * answer is exact whenever the roll-up runs (docs/operations.md, Runtime evidence: why 60).
   */
  runtimeRollupSeconds: number;
  /**
   * Seconds a connection of the replica's database pools (requests and ingest; folds) may sit idle
   * before it is closed (SPECTATOR_DATABASE_IDLE_SECONDS, default 300, 0–86400; 0: never closed).
   * node-postgres's own default is 10 s: a replica whose agents pause longer than that reopened up
   * to its pools' size of connections, each a new PostgreSQL backend paying authentication and cold
   * catalog caches (docs/operations.md, The database pools' idle connections).
   */
  databaseIdleSeconds: number;
  /** Whether each database pool opens all its connections at start (`BackendOptions.openPoolsAtStart`, default true). */
  openPoolsAtStart: boolean;
}

/**
 * Seconds an idle database connection is kept by default: longer than any pause of a deployment
 * streaming agents (their batches come every few seconds), short enough that a replica left quiet
 * gives its connections back to PostgreSQL within minutes.
 */
export const DEFAULT_DATABASE_IDLE_SECONDS = 300;

/**
 * How long committed batch ids are kept by default: far longer than an agent holds a batch (its
 * spool resends within seconds of a reconnect; a disk spool survives an agent restart, which an
 * operator notices within days), yet bounded so the table does not grow forever.
 */
export const DEFAULT_BATCH_RETENTION_DAYS = 30;

/** How long a capture is kept after its last traffic by default: a quarter of captures to review, far more than a review needs. */
export const DEFAULT_CAPTURE_RETENTION_DAYS = 90;

/** Agent message bytes queued on a replica before it stops reading: 16 messages of the largest size. */
export const DEFAULT_MAX_QUEUED_BYTES = 64 * 1024 * 1024;

/** Endpoints one capture keeps by default: far more than an API has, few enough that its views stay small (about 2 MB). */
export const DEFAULT_MAX_ENDPOINTS_PER_CAPTURE = 20_000;

/** Agent connections a replica keeps by default: an agent holds one, so far more agents than a deployment runs. */
export const DEFAULT_MAX_AGENT_CONNECTIONS = 1_000;

/** Agent connections of one project a replica keeps by default. */
export const DEFAULT_MAX_AGENT_CONNECTIONS_PER_PROJECT = 100;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Thrown when the configuration is invalid; the message names every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration: ${problems.join('; ')}`);
    this.name = 'ConfigError';
  }
}

// The admin token travels in headers and WebSocket sub-protocols, so it must be a plain token.
const TOKEN_PATTERN = /^[A-Za-z0-9._~-]{16,200}$/;

/** `SPECTATOR_PUBLIC_URL`: an http(s) URL without credentials, query or fragment; kept without a trailing slash. */
function parsePublicUrl(raw: string | undefined, problems: string[]): string | null {
  if (raw === undefined) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    problems.push('SPECTATOR_PUBLIC_URL must be an http:// or https:// URL');
    return null;
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    problems.push('SPECTATOR_PUBLIC_URL must be an http:// or https:// URL without credentials, query or fragment');
    return null;
  }
  return url.toString().replace(/\/+$/, '');
}

/**
 * Parses the environment and the caller's overrides into a validated configuration.
 * Defaults: port 3000 (`PORT`), host 127.0.0.1 (`HOST`), data dir `./.spectator` (`SPECTATOR_DATA_DIR`),
 * migrations on (`SPECTATOR_RUN_MIGRATIONS=false` turns them off), log level `info` (`LOG_LEVEL`).
 * @throws ConfigError naming every bad variable.
 */
export function parseConfig(env: NodeJS.ProcessEnv, options: BackendOptions = {}): BackendConfig {
  const problems: string[] = [];

  const port = options.port ?? parseInteger(env.PORT, 'PORT', 3000, 0, 65535, problems);
  const host = options.host ?? (env.HOST || '127.0.0.1');

  const databaseUrl = options.databaseUrl ?? (env.DATABASE_URL || null);
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }

  const dataDir = path.resolve(options.dataDir ?? (env.SPECTATOR_DATA_DIR || '.spectator'));

  const adminToken = options.adminToken ?? (env.SPECTATOR_ADMIN_TOKEN || null);
  if (adminToken !== null && !TOKEN_PATTERN.test(adminToken)) {
    problems.push('SPECTATOR_ADMIN_TOKEN must be 16-200 characters of A-Z a-z 0-9 . _ ~ -');
  }

  let runMigrations = options.runMigrations ?? true;
  if (
    options.runMigrations === undefined &&
    env.SPECTATOR_RUN_MIGRATIONS !== undefined &&
    env.SPECTATOR_RUN_MIGRATIONS !== ''
  ) {
    const parsed = parseBoolean(env.SPECTATOR_RUN_MIGRATIONS);
    if (parsed === null) problems.push('SPECTATOR_RUN_MIGRATIONS must be true or false');
    else runMigrations = parsed;
  }

  const dashboardDir = path.resolve(
    options.dashboardDir ?? (env.SPECTATOR_DASHBOARD_DIR || path.join(backendPackageDir(), '..', 'dashboard', 'dist')),
  );

  const logLevel = options.logLevel ?? (env.LOG_LEVEL || 'info');
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const maxMessageBytes =
    options.maxMessageBytes ??
    parseInteger(
      env.SPECTATOR_MAX_MESSAGE_BYTES,
      'SPECTATOR_MAX_MESSAGE_BYTES',
      4 * 1024 * 1024,
      1024,
      256 * 1024 * 1024,
      problems,
    );

  const maxQueuedBytes =
    options.maxQueuedBytes ??
    parseInteger(
      env.SPECTATOR_MAX_QUEUED_BYTES,
      'SPECTATOR_MAX_QUEUED_BYTES',
      DEFAULT_MAX_QUEUED_BYTES,
      1024 * 1024,
      4 * 1024 * 1024 * 1024,
      problems,
    );

  const maxEndpointsPerCapture =
    options.maxEndpointsPerCapture ??
    parseInteger(
      env.SPECTATOR_MAX_ENDPOINTS_PER_CAPTURE,
      'SPECTATOR_MAX_ENDPOINTS_PER_CAPTURE',
      DEFAULT_MAX_ENDPOINTS_PER_CAPTURE,
      1,
      1_000_000,
      problems,
    );

  const maxAgentConnections =
    options.maxAgentConnections ??
    parseInteger(
      env.SPECTATOR_MAX_AGENT_CONNECTIONS,
      'SPECTATOR_MAX_AGENT_CONNECTIONS',
      DEFAULT_MAX_AGENT_CONNECTIONS,
      1,
      1_000_000,
      problems,
    );

  const maxAgentConnectionsPerProject =
    options.maxAgentConnectionsPerProject ??
    parseInteger(
      env.SPECTATOR_MAX_AGENT_CONNECTIONS_PER_PROJECT,
      'SPECTATOR_MAX_AGENT_CONNECTIONS_PER_PROJECT',
      DEFAULT_MAX_AGENT_CONNECTIONS_PER_PROJECT,
      1,
      1_000_000,
      problems,
    );

  const batchRetentionDays =
    options.batchRetentionDays ??
    parseInteger(
      env.SPECTATOR_BATCH_RETENTION_DAYS,
      'SPECTATOR_BATCH_RETENTION_DAYS',
      DEFAULT_BATCH_RETENTION_DAYS,
      1,
      3650,
      problems,
    );

  const captureRetentionDays =
    options.captureRetentionDays ??
    parseInteger(
      env.SPECTATOR_CAPTURE_RETENTION_DAYS,
      'SPECTATOR_CAPTURE_RETENTION_DAYS',
      DEFAULT_CAPTURE_RETENTION_DAYS,
      0,
      36500,
      problems,
    );

  const tokenCheckSeconds =
    options.tokenCheckSeconds ??
    parseInteger(env.SPECTATOR_TOKEN_CHECK_SECONDS, 'SPECTATOR_TOKEN_CHECK_SECONDS', 30, 1, 3600, problems);

  const webhookAllow = parseAllowList(options.webhookAllow?.join(',') ?? env.SPECTATOR_WEBHOOK_ALLOW, problems);

  const metricsToken = options.metricsToken ?? (env.SPECTATOR_METRICS_TOKEN || null);
  if (metricsToken !== null && !TOKEN_PATTERN.test(metricsToken)) {
    problems.push('SPECTATOR_METRICS_TOKEN must be 16-200 characters of A-Z a-z 0-9 . _ ~ -');
  }

  const publicUrl = parsePublicUrl(options.publicUrl ?? (env.SPECTATOR_PUBLIC_URL || undefined), problems);

  const oidc = parseOidc(
    options.oidc ?? {
      issuer: env.SPECTATOR_OIDC_ISSUER || undefined,
      clientId: env.SPECTATOR_OIDC_CLIENT_ID || undefined,
      clientSecret: env.SPECTATOR_OIDC_CLIENT_SECRET || undefined,
      redirectUrl: env.SPECTATOR_OIDC_REDIRECT_URL || undefined,
      scopes: env.SPECTATOR_OIDC_SCOPES || undefined,
      groupsClaim: env.SPECTATOR_OIDC_GROUPS_CLAIM || undefined,
      adminGroups: env.SPECTATOR_OIDC_ADMIN_GROUPS?.split(',')
        .map((group) => group.trim())
        .filter(Boolean),
      providerName: env.SPECTATOR_OIDC_NAME || undefined,
      recheckMinutes: env.SPECTATOR_OIDC_RECHECK_MINUTES
        ? parseInteger(
            env.SPECTATOR_OIDC_RECHECK_MINUTES,
            'SPECTATOR_OIDC_RECHECK_MINUTES',
            RECHECK_MINUTES.fallback,
            RECHECK_MINUTES.min,
            RECHECK_MINUTES.max,
            problems,
          )
        : undefined,
      postLogoutRedirectUrl: env.SPECTATOR_OIDC_POST_LOGOUT_URL || undefined,
    },
    problems,
  );
  const sessionHours =
    options.sessionHours ?? parseInteger(env.SPECTATOR_SESSION_HOURS, 'SPECTATOR_SESSION_HOURS', 12, 1, 720, problems);

  const runtimeRetention = parseRuntimeRetention(options.runtimeRetention ?? {}, env, problems);
  const runtimeRollupSeconds =
    options.runtimeRollupSeconds ??
    parseInteger(env.SPECTATOR_RUNTIME_ROLLUP_SECONDS, 'SPECTATOR_RUNTIME_ROLLUP_SECONDS', 60, 1, 3600, problems);
  const databaseIdleSeconds =
    options.databaseIdleSeconds ??
    parseInteger(
      env.SPECTATOR_DATABASE_IDLE_SECONDS,
      'SPECTATOR_DATABASE_IDLE_SECONDS',
      DEFAULT_DATABASE_IDLE_SECONDS,
      0,
      86_400,
      problems,
    );

  if (problems.length > 0) throw new ConfigError(problems);
  return {
    port,
    host,
    databaseUrl,
    dataDir,
    adminToken,
    runMigrations,
    dashboardDir,
    logLevel,
    maxMessageBytes,
    maxQueuedBytes,
    maxEndpointsPerCapture,
    maxAgentConnections,
    maxAgentConnectionsPerProject,
    batchRetentionDays,
    captureRetentionDays,
    tokenCheckSeconds,
    webhookAllow,
    metricsToken,
    publicUrl,
    oidc,
    sessionHours,
    runtimeRetention,
    runtimeRollupSeconds,
    databaseIdleSeconds,
    openPoolsAtStart: options.openPoolsAtStart ?? true,
  };
}

/** The runtime retention from options or SPECTATOR_RUNTIME_{MINUTE,HOUR,DAY}_DAYS, each at least the one before. */
function parseRuntimeRetention(
  options: Partial<RuntimeRetention>,
  env: NodeJS.ProcessEnv,
  problems: string[],
): RuntimeRetention {
  const days = (key: keyof RuntimeRetention, variable: string): number =>
    options[key] ?? parseInteger(env[variable], variable, DEFAULT_RUNTIME_RETENTION[key], 1, 36500, problems);
  const retention = {
    minuteDays: days('minuteDays', 'SPECTATOR_RUNTIME_MINUTE_DAYS'),
    hourDays: days('hourDays', 'SPECTATOR_RUNTIME_HOUR_DAYS'),
    dayDays: days('dayDays', 'SPECTATOR_RUNTIME_DAY_DAYS'),
  };
  if (retention.hourDays < retention.minuteDays)
    problems.push(
      `SPECTATOR_RUNTIME_HOUR_DAYS (${retention.hourDays}) must be at least SPECTATOR_RUNTIME_MINUTE_DAYS (${retention.minuteDays})`,
    );
  if (retention.dayDays < retention.hourDays)
    problems.push(
      `SPECTATOR_RUNTIME_DAY_DAYS (${retention.dayDays}) must be at least SPECTATOR_RUNTIME_HOUR_DAYS (${retention.hourDays})`,
    );
  return retention;
}

/** The directory of @spectator/backend's package.json, from `src` (tests) or `dist/src` (built). */
function backendPackageDir(): string {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

function parseInteger(
  text: string | undefined,
  name: string,
  fallback: number,
  min: number,
  max: number,
  problems: string[],
): number {
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    problems.push(`${name} must be an integer from ${min} to ${max}`);
    return fallback;
  }
  return value;
}

function parseBoolean(text: string): boolean | null {
  const lower = text.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(lower)) return true;
  if (['false', '0', 'no', 'off'].includes(lower)) return false;
  return null;
}
