import { Injectable } from '@nestjs/common';

/** A monotonically increasing Prometheus counter. */
export class Counter {
  private value = 0;
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(by = 1): void {
    this.value += by;
  }
  get current(): number {
    return this.value;
  }
}

/** A Prometheus gauge (goes up and down). */
export class Gauge extends Counter {
  dec(by = 1): void {
    this.inc(-by);
  }
}

/** In-process metrics of this replica, written in the Prometheus text format by hand. */
@Injectable()
export class MetricsService {
  readonly batches = new Counter('spectator_ingest_batches_total', 'Agent batches committed');
  readonly duplicateBatches = new Counter(
    'spectator_ingest_duplicate_batches_total',
    'Agent batches acknowledged again without counting (resends)',
  );
  readonly observations = new Counter(
    'spectator_ingest_observations_total',
    'Aggregated observations received in committed batches',
  );
  /** Where an acknowledgement's time goes (issue 20): sums over `batchAcks`, in seconds. */
  readonly batchWaitSeconds = new Counter(
    'spectator_ingest_batch_wait_seconds_total',
    'Seconds agent batches waited from being read to being handled (behind earlier messages of their connection), summed',
  );
  readonly batchCommitSeconds = new Counter(
    'spectator_ingest_batch_commit_seconds_total',
    'Seconds from handling an agent batch to its commit (waits for a database connection included), summed',
  );
  readonly batchFoldWaitSeconds = new Counter(
    'spectator_ingest_batch_fold_wait_seconds_total',
    "Seconds acknowledgements waited after their batch's commit (behind their connection's earlier capture-ended answers), summed",
  );
  readonly batchAcks = new Counter(
    'spectator_ingest_batch_acks_total',
    'Agent batches acknowledged after a commit on this replica (what the three sums above are over)',
  );
  /** How soon an evidence batch's fold follows its commit, whether or not its ack waits (issue 20). */
  readonly evidenceFoldSeconds = new Counter(
    'spectator_ingest_evidence_fold_seconds_total',
    "Seconds from an evidence batch's commit to its fold (at most 5 s each), summed over spectator_ingest_evidence_batches_total",
  );
  readonly evidenceBatches = new Counter(
    'spectator_ingest_evidence_batches_total',
    'Evidence batches (CI, staging, production) committed on this replica and followed to their fold',
  );
  readonly foldWaitsTimedOut = new Counter(
    'spectator_ingest_fold_waits_timed_out_total',
    'Evidence batches not seen folded within 5 s of their commit (durable; a later fold or the sweep takes them)',
  );
  readonly captureEndsUnfolded = new Counter(
    'spectator_ingest_capture_ends_unfolded_total',
    "Captures' ends answered (capture-ended) before their row's evidence queued before them was seen folded (after 5 s; durable, folded later)",
  );
  readonly readsWaitingForFolds = new Counter(
    'spectator_gate_reads_waiting_for_folds_total',
    "CI gate reads that found their pull request's batches queued (acknowledged, not folded) and waited for their fold",
  );
  readonly readsUnfolded = new Counter(
    'spectator_gate_reads_unfolded_total',
    "CI gate reads answered 503 (ask again) because their pull request's batches were still queued after 20 s",
  );
  readonly rejectedMessages = new Counter(
    'spectator_ingest_rejected_messages_total',
    'Agent messages answered with an error',
  );
  readonly capturesStarted = new Counter('spectator_captures_started_total', 'Captures created');
  readonly httpRequests = new Counter('spectator_http_requests_total', 'HTTP requests served');
  readonly httpErrors = new Counter('spectator_http_server_errors_total', 'HTTP requests answered with a 5xx status');
  readonly agentConnections = new Gauge(
    'spectator_agent_connections',
    'Agent WebSocket connections open on this replica',
  );
  readonly agentConnectionsRefused = new Counter(
    'spectator_agent_connections_refused_total',
    'Agent WebSocket connections closed at once because a connection cap was reached',
  );
  readonly dashboardConnections = new Gauge(
    'spectator_dashboard_connections',
    'Dashboard event WebSocket connections open on this replica',
  );
  readonly agentQueuedBytes = new Gauge(
    'spectator_agent_queued_bytes',
    'Bytes of agent messages read and not yet handled, all connections of this replica',
  );
  readonly agentQueuedBytesMax = new Gauge(
    'spectator_agent_queued_bytes_max',
    'Highest spectator_agent_queued_bytes since this replica started',
  );
  readonly agentReadsPaused = new Counter(
    'spectator_agent_reads_paused_total',
    'Times reading from agent connections stopped because the queued bytes were over the bound',
  );

  /** The exposition text (format version 0.0.4). */
  render(): string {
    const metrics: Counter[] = [
      this.batches,
      this.duplicateBatches,
      this.observations,
      this.batchWaitSeconds,
      this.batchCommitSeconds,
      this.batchFoldWaitSeconds,
      this.batchAcks,
      this.evidenceFoldSeconds,
      this.evidenceBatches,
      this.foldWaitsTimedOut,
      this.captureEndsUnfolded,
      this.readsWaitingForFolds,
      this.readsUnfolded,
      this.rejectedMessages,
      this.capturesStarted,
      this.httpRequests,
      this.httpErrors,
      this.agentConnections,
      this.agentConnectionsRefused,
      this.dashboardConnections,
      this.agentQueuedBytes,
      this.agentQueuedBytesMax,
      this.agentReadsPaused,
    ];
    const lines = metrics.flatMap((m) => [
      `# HELP ${m.name} ${m.help}`,
      `# TYPE ${m.name} ${m instanceof Gauge ? 'gauge' : 'counter'}`,
      `${m.name} ${m.current}`,
    ]);
    const memory = process.memoryUsage();
    lines.push(
      '# HELP process_resident_memory_bytes Resident memory size in bytes',
      '# TYPE process_resident_memory_bytes gauge',
      `process_resident_memory_bytes ${memory.rss}`,
    );
    lines.push(
      '# HELP process_uptime_seconds Seconds since this process started',
      '# TYPE process_uptime_seconds gauge',
      `process_uptime_seconds ${process.uptime().toFixed(1)}`,
    );
    return `${lines.join('\n')}\n`;
  }
}
