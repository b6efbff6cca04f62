import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type http from 'node:http';
import { hasParameter, type AgentEnvironment, type WireCapture } from '@spectator/shared';
import { createAdminServer, listen } from './admin';
import { CommandSupervisor } from './command';
import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_SHAPE_BUDGET,
  parseBackend,
  parseHostPort,
  parseUpstream,
  type AgentConfig,
  type HostPort,
} from './config';
import { Captures } from './capture/captures';
import { ConsumerIds } from './observe/consumers';
import { ObservationPipeline } from './observe/pipeline';
import { UpstreamProbe } from './capture/probe';
import { IgnoreRules } from './observe/rules';
import { samplerOptionsForBudget, type SamplerOptions } from './observe/sampler';
import { createRootLogger, type Logger } from './log';
import { Metrics } from './metrics';
import { ProxyServer } from './proxy/server';
import { readTlsFiles, readUpstreamCa, watchTlsFiles } from './proxy/tls-files';
import { Spool } from './uplink/spool';
import { Uplink } from './uplink/uplink';
import { agentVersion } from './version';

/** Timings and bounds; the defaults suit production, tests shorten them. */
export interface AgentTuning {
  /** Batch at least this often, ms. Default 1000. */
  flushIntervalMs: number;
  /** Upstream probe interval, ms. Default 2000. */
  probeIntervalMs: number;
  /** service.yml poll interval, ms. Default 1000. */
  configPollMs: number;
  /** WebSocket ping interval, ms. Default 15000. */
  heartbeatMs: number;
  backoffMinMs: number;
  backoffMaxMs: number;
  /** On close: how long in-flight requests may take, ms. Default 10000. */
  shutdownGraceMs: number;
  /** On close: how long to wait for the last acknowledgement, ms. Default 5000. */
  ackWaitMs: number;
  /** Upstream response headers timeout (then 504), ms. Default 60000. */
  upstreamHeadersTimeoutMs: number;
  /** A stream response (server-sent events, JSON lines) still open after this long is counted then, ms. Default 10000. */
  streamRecordAfterMs: number;
  spoolMaxBatches: number;
  /** Rows that trigger a batch before the timer. Default 500. */
  batchRows: number;
  queueMaxItems: number;
  queueMaxBytes: number;
  /** Bytes all open streams (server-sent events, JSON lines) keep for shape work at most. Default 16 MiB. */
  streamBytesMax: number;
  /** How long an interaction whose path holds an undecided literal is held before it goes out as it is, ms (docs/paths.md). Default 3000. */
  pathHoldMs: number;
  /**
   * How long a held path whose undecided literal has a sibling it may be one value with is held at most, ms: past
   * it, it goes out with that literal as a parameter (docs/paths.md). Default 30000.
   */
  pathPendingMs: number;
  sampler: Partial<SamplerOptions>;
  /** Clock of shape sampling (budget refill, per-key windows), ms. Default `Date.now`; a test stops it. */
  samplerClock: () => number;
  /** The wrapped command's output. Default inherited. */
  commandStdio: 'inherit' | 'ignore';
  restartDelayMs: number;
}

const DEFAULT_TUNING: AgentTuning = {
  flushIntervalMs: 1_000,
  probeIntervalMs: 2_000,
  configPollMs: 1_000,
  heartbeatMs: 15_000,
  backoffMinMs: 250,
  backoffMaxMs: 30_000,
  shutdownGraceMs: 10_000,
  ackWaitMs: 5_000,
  upstreamHeadersTimeoutMs: 60_000,
  streamRecordAfterMs: 10_000,
  spoolMaxBatches: 1_000,
  batchRows: 500,
  queueMaxItems: 1_000,
  queueMaxBytes: 32 * 1024 * 1024,
  streamBytesMax: 16 * 1024 * 1024,
  pathHoldMs: 3_000,
  pathPendingMs: 30_000,
  sampler: {},
  samplerClock: Date.now,
  commandStdio: 'inherit',
  restartDelayMs: 500,
};

/**
 * Options of `startAgent`: a config from `parseAgentConfig`, or any part of one (addresses may be
 * given as text); plus what only a program can pass.
 */
export interface AgentOptions extends Partial<Omit<AgentConfig, 'upstream' | 'listen' | 'admin'>> {
  upstream?: URL | string | null;
  /** Default `0.0.0.0:4000`. */
  listen?: HostPort | string;
  admin?: HostPort | string | null;
  /** false: forward only, no exchange is observed (the benchmark's baseline). Default true. */
  observe?: boolean;
  /** The earlier name of `observe`, still read (`observe` wins). */
  capture?: boolean;
  /** The earlier name of `bodyLimit`, still read (`bodyLimit` wins). */
  captureLimit?: number;
  /** Root logger to use instead of a new one on stdout. */
  logger?: Logger;
  agentId?: string;
  tuning?: Partial<AgentTuning>;
}

/**
 * This agent's id: a new one per run, or with a spool directory the one kept there (`agent-id`),
 * so spooled batches of a capture are resent by the agent that opened it (the backend binds a
 * capture to its agent). A directory that cannot be written gives a new id, logged.
 */
function spooledAgentId(dir: string | null, log: Logger): string {
  const id = randomUUID();
  if (dir === null) return id;
  const file = path.join(dir, 'agent-id');
  try {
    const kept = fs.readFileSync(file, 'utf8').trim();
    if (/^[0-9a-f-]{36}$/.test(kept)) return kept;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      log.warn({ dir, code: (err as NodeJS.ErrnoException).code }, 'cannot read the kept agent id; using a new one');
  }
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(file, `${id}\n`);
  } catch (err) {
    log.warn({ dir, code: (err as NodeJS.ErrnoException).code }, 'cannot keep the agent id in the spool directory');
  }
  return id;
}

export interface RunningAgent {
  /** The proxy's URL: where clients send their requests. */
  proxyUrl: string;
  /** Base URL of the admin listener, or null. */
  adminUrl: string | null;
  /** Id of the current capture. */
  captureId(): string;
  /** Graceful stop: stop accepting, finish in-flight requests, flush, wait (bounded) for the last ack. */
  close(): Promise<void>;
  /** The upstream forwarded to (chosen by the agent when a command runs without --upstream). */
  upstreamUrl: string;
  metrics: Metrics;
  /** With a wrapped command: restart it (a new capture). Resolves once it was stopped. */
  restartCommand(): Promise<void>;
  /** With a wrapped command: pass a signal to it. */
  signalCommand(signal: NodeJS.Signals): void;
  /**
   * Pause (false) or resume (true) observing exchanges while proxying goes on; requests already
   * under way finish as they started. Paused time earns no shape budget. The benchmark measures
   * observing on and off in one process with it. No effect on an agent started with `observe: false`.
   */
  setObserving(enabled: boolean): void;
  /** The earlier name of `setObserving`, still there. */
  setCapturing(enabled: boolean): void;
}

/** Start an agent: proxy, observation pipeline, uplink to the backend, admin port and wrapped command. */
export async function startAgent(options: AgentOptions): Promise<RunningAgent> {
  const tuning: AgentTuning = { ...DEFAULT_TUNING, ...options.tuning };
  const root = options.logger ?? createRootLogger(options.logLevel ?? 'info', undefined, options.logFormat);
  const log = root.child({ module: 'agent' });
  const metrics = new Metrics();
  const captures = new Captures();
  const recentCaptures = new Map<string, WireCapture>([[captures.current.id, captures.current]]);
  metrics.gauge('captures_total', () => captures.count);

  const command = options.command ?? null;
  // Read first: unusable TLS files stop the start before anything else runs.
  const tls = options.tls ? await readTlsFiles(options.tls) : undefined;
  const upstreamCa = options.upstreamCaPath ? await readUpstreamCa(options.upstreamCaPath) : undefined;
  const upstream = await resolveUpstream(options.upstream ?? null, command);
  const listenAt =
    typeof options.listen === 'string'
      ? parseHostPort(options.listen, '0.0.0.0')
      : (options.listen ?? { host: '0.0.0.0', port: 4000 });
  const adminAt = typeof options.admin === 'string' ? parseHostPort(options.admin, '0.0.0.0') : (options.admin ?? null);
  const environment: AgentEnvironment = options.environment ?? { kind: 'local' };

  let uplink: Uplink | null = null;
  // Set once the pipeline and uplink exist; the first load (below) is applied then.
  let pathsChanged: (paths: readonly string[]) => void = () => undefined;
  const rules = new IgnoreRules(
    options.configPath ?? './service.yml',
    root.child({ module: 'rules' }),
    (sources) => uplink?.sendControl({ type: 'rules', captureId: captures.current.id, rules: sources }),
    tuning.configPollMs,
    (paths) => pathsChanged(paths),
  );
  rules.start();

  let flushQueued = false;
  const consumers = options.consumers ? new ConsumerIds(options.consumers) : null;
  const pipeline =
    (options.observe ?? options.capture) === false
      ? null
      : new ObservationPipeline({
          bodyLimit: options.bodyLimit ?? options.captureLimit ?? DEFAULT_BODY_LIMIT,
          captureId: () => captures.current.id,
          rules: () => rules.rules,
          metrics,
          log: root.child({ module: 'observe' }),
          backlogRows: tuning.batchRows,
          queueMaxItems: tuning.queueMaxItems,
          queueMaxBytes: tuning.queueMaxBytes,
          streamBytesMax: tuning.streamBytesMax,
          holdMs: tuning.pathHoldMs,
          pendingMs: tuning.pathPendingMs,
          sampler: { ...samplerOptionsForBudget(options.shapeBudget ?? DEFAULT_SHAPE_BUDGET), ...tuning.sampler },
          samplerClock: tuning.samplerClock,
          consumers,
          onBacklog: () => {
            if (flushQueued) return;
            flushQueued = true;
            setImmediate(flush, false);
          },
        });

  /** Hand the rows over; `whole`: with every waiting piece of shape and learner work done first (see `drain`). */
  function flush(whole: boolean): void {
    flushQueued = false;
    if (!pipeline) return;
    for (const group of pipeline.drain(whole)) {
      const capture = recentCaptures.get(group.captureId);
      if (!uplink || !capture) continue;
      if (group.observations.length > 0 || group.unmatched || group.failures)
        uplink.sendBatch(capture, group.observations, group.shapes, group.unmatched, group.failures);
      // After the batch: the backend regroups rows already stored and maps later literal rows too.
      const learned = group.learned === undefined ? [] : Object.keys(group.learned);
      if (learned.length > 0)
        uplink.sendControl({ type: 'learned', captureId: capture.id, templates: learned, covers: group.learned });
    }
  }

  if (options.backend) {
    const spool = new Spool({
      dir: options.spoolDir ?? null,
      maxBatches: tuning.spoolMaxBatches,
      log: root.child({ module: 'spool' }),
      metrics,
    });
    uplink = new Uplink({
      url: parseBackend(options.backend),
      token: options.token ?? '',
      agentId: options.agentId ?? spooledAgentId(options.spoolDir ?? null, log),
      agentVersion: agentVersion(),
      environment,
      spool,
      log: root.child({ module: 'uplink' }),
      metrics,
      helloState: () => ({ capture: captures.current, rules: rules.sources }),
      onTemplates: (templates) => pipeline?.setKnownTemplates(templates),
      onWelcome: (project) => {
        // Pseudonyms are derived per project: labels made for the token's project would not match.
        if (options.consumers && options.consumers.project !== project)
          log.warn(
            { configured: options.consumers.project, project },
            "consumer pseudonyms are derived for another project than the token is of: set --project to the token's project",
          );
      },
      heartbeatMs: tuning.heartbeatMs,
      backoffMinMs: tuning.backoffMinMs,
      backoffMaxMs: tuning.backoffMaxMs,
    });
  } else {
    log.warn({}, 'no --backend: traffic is proxied and summarised but nothing is sent');
  }

  // Users' path templates (service.yml paths:) are matched like documented ones, and the backend
  // regroups what the project stored under literal paths they cover.
  pathsChanged = (paths) => {
    pipeline?.setPathHints(paths);
    const templates = paths.filter(hasParameter);
    // The literal entries keep their rows apart from the templates (`/users/me` beside `/users/{user}`).
    const literals = paths.filter((path) => !hasParameter(path));
    if (templates.length > 0)
      uplink?.sendControl({
        type: 'learned',
        captureId: captures.current.id,
        templates,
        hint: true,
        ...(literals.length > 0 ? { literals } : {}),
      });
  };
  pathsChanged(rules.paths);

  function newCapture(reason: 'command-restart' | 'upstream-restart'): void {
    flush(true);
    const previous = captures.current;
    const message = captures.next(reason);
    recentCaptures.set(message.capture.id, message.capture);
    // Batches of older captures may still be spooled; their capture objects live in the spool.
    if (recentCaptures.size > 16) recentCaptures.delete(recentCaptures.keys().next().value as string);
    log.info({ captureId: message.capture.id, reason, previous: message.previous?.id }, 'new capture');
    uplink?.sendControl(message);
    // The previous capture's end travels in that message; kept until the backend acknowledges it.
    if (message.previous) uplink?.endCapture(previous, message.previous.endedAt, true);
  }

  const probe = new UpstreamProbe(upstream, tuning.probeIntervalMs, root.child({ module: 'probe' }), metrics, () =>
    newCapture('upstream-restart'),
  );
  const proxy = new ProxyServer({
    ...(tls ? { tls } : {}),
    ...(upstreamCa ? { upstreamCa } : {}),
    upstream,
    observer: pipeline,
    metrics,
    log: root.child({ module: 'proxy' }),
    upstreamHeadersTimeoutMs: tuning.upstreamHeadersTimeoutMs,
    streamRecordAfterMs: tuning.streamRecordAfterMs,
    requestClientCertificate: consumers?.wantsCertificate ?? false,
    onUpstreamFailure: (failure) => {
      if (failure.statusCode === 503) probe.markDown();
    },
  });
  const proxyAddress = await proxy.listen(listenAt.host, listenAt.port);
  const stopWatchingTls = options.tls
    ? watchTlsFiles(
        options.tls,
        tuning.configPollMs,
        (credentials) => proxy.setCredentials(credentials),
        root.child({ module: 'tls' }),
      )
    : () => undefined;
  let closing = false;

  let admin: http.Server | null = null;
  let adminUrl: string | null = null;
  if (adminAt) {
    admin = createAdminServer(metrics, {
      notReady: () => {
        const reasons: string[] = [];
        if (closing) reasons.push('shutting down');
        if (probe.upstreamState !== 'up') reasons.push(`upstream ${probe.upstreamState}`);
        return reasons;
      },
    });
    const address = await listen(admin, adminAt.host, adminAt.port);
    adminUrl = `http://${urlHost(adminAt.host)}:${address.port}`;
  }

  const supervisor = command
    ? new CommandSupervisor({
        command,
        port: Number(upstream.port),
        log: root.child({ module: 'command' }),
        stdio: tuning.commandStdio,
        restartDelayMs: tuning.restartDelayMs,
        graceMs: tuning.shutdownGraceMs,
        onRestart: () => {
          probe.reset();
          newCapture('command-restart');
        },
      })
    : null;
  supervisor?.start();
  probe.start();
  uplink?.start();
  const flushTimer = setInterval(flush, tuning.flushIntervalMs, false);
  flushTimer.unref();

  const proxyUrl = `${proxy.secure ? 'https' : 'http'}://${urlHost(listenAt.host)}:${proxyAddress.port}`;
  log.info(
    {
      proxy: proxyUrl,
      upstream: upstream.origin,
      admin: adminUrl,
      environment,
      captureId: captures.current.id,
      capture: pipeline ? 'on' : 'off',
      // The sources only: the key never appears in a log line.
      consumers: options.consumers ? options.consumers.sources.map((source) => source.kind) : 'off',
    },
    'agent started',
  );

  let closed: Promise<void> | null = null;
  async function close(): Promise<void> {
    closing = true;
    probe.stop();
    rules.stop();
    stopWatchingTls();
    await proxy.close(tuning.shutdownGraceMs);
    await supervisor?.stop(tuning.shutdownGraceMs);
    clearInterval(flushTimer);
    pipeline?.releaseAll();
    flush(true);
    if (uplink) {
      uplink.endCapture(captures.current, new Date().toISOString());
      const acked = await uplink.waitForAcks(tuning.ackWaitMs);
      if (!acked)
        log.warn(
          { spooled: metrics.get('batches_spooled'), captureEnds: metrics.get('capture_ends_spooled') },
          'stopping with unacknowledged batches or capture ends (kept in the spool when --spool is set)',
        );
      await uplink.close();
    }
    if (admin) await new Promise<void>((resolve) => admin.close(() => resolve()));
    log.info({}, 'agent stopped');
  }

  function setObserving(enabled: boolean): void {
    if (!pipeline) return;
    if (enabled) pipeline.resume();
    else pipeline.pause();
    proxy.setObserver(enabled ? pipeline : null);
  }

  return {
    proxyUrl,
    adminUrl,
    upstreamUrl: upstream.origin,
    metrics,
    captureId: () => captures.current.id,
    close: () => (closed ??= close()),
    restartCommand: async () => supervisor?.restart(),
    signalCommand: (signal) => supervisor?.signal(signal),
    setObserving,
    setCapturing: setObserving,
  };
}

/** The given upstream, or with a wrapped command and none given, a free local port for the app. */
async function resolveUpstream(upstream: URL | string | null, command: string[] | null): Promise<URL> {
  if (upstream !== null) return typeof upstream === 'string' ? parseUpstream(upstream) : upstream;
  if (!command) throw new Error('startAgent: upstream is required unless a command is given');
  const port = await new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port: free } = server.address() as net.AddressInfo;
      server.close(() => resolve(free));
    });
  });
  return new URL(`http://127.0.0.1:${port}`);
}

/** A host as written in a URL a client can use: wildcard addresses become loopback. */
function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
