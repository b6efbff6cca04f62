/**
 * The agent's counters and gauges, rendered by hand in the Prometheus text format (version 0.0.4)
 * so the admin port needs no dependency. Counters only ever grow; gauges are read when rendered.
 */
interface MetricDefinition {
  help: string;
  type: 'counter' | 'gauge';
  /** An earlier name, kept for dashboards and alerts that read it: the value of the metric named here. */
  sameAs?: string;
}

const DEFINITIONS = {
  requests_total: { help: 'Requests received by the proxy.', type: 'counter' },
  upstream_errors_total: {
    help: 'Requests answered by the agent itself because the upstream failed (502/503/504).',
    type: 'counter',
  },
  observed_total: { help: 'Interactions counted into observations.', type: 'counter' },
  captured_total: {
    help: 'The earlier name of observed_total (the same count), still served.',
    type: 'counter',
    sameAs: 'observed_total',
  },
  ignored_total: { help: 'Interactions matched by an ignore rule.', type: 'counter' },
  shaped_total: { help: 'Interactions whose bodies were shaped.', type: 'counter' },
  unshaped_total: {
    help: 'Interactions counted without a body shape: shape work sampled out under load, or the body cut short (the client left).',
    type: 'counter',
  },
  dropped_total: {
    help: 'Samples whose bodies were dropped because the shape queue was full (the interaction is still counted).',
    type: 'counter',
  },
  queue_depth: { help: 'Samples waiting in the shape queue.', type: 'gauge' },
  queue_bytes: { help: 'Body bytes held by samples waiting in the shape queue.', type: 'gauge' },
  stream_bytes: {
    help: 'Body bytes kept by open streams (server-sent events, JSON lines) for shape work.',
    type: 'gauge',
  },
  novel_shaped_total: {
    help: 'Interactions sampled out but shaped anyway because their bodies were a new variant of their endpoint and status (key fingerprint).',
    type: 'counter',
  },
  evidence_shaped_total: {
    help: "Interactions sampled out but shaped anyway because they were a path's first answer for its method: the path learner's evidence.",
    type: 'counter',
  },
  evidence_skipped_total: {
    help: "Paths' first answers sampled out and not shaped for the path learner: past its cap of 20 a second (a later answer of the path may be).",
    type: 'counter',
  },
  consumers_overflow_total: {
    help: "Calls of consumers past a row's or a batch's bound of named consumers (64 per row, 10,000 per batch): counted, sent unnamed as consumersOverflow.",
    type: 'counter',
  },
  unmatched_total: {
    help: 'Requests counted as noise: only 404/405 on a path matching no known or learned template (counted apart, never recorded).',
    type: 'counter',
  },
  held_interactions: {
    help: 'Interactions held while a literal in their path is undecided (see docs/paths.md).',
    type: 'gauge',
  },
  batches_sent_total: { help: 'Batches written to the backend WebSocket (resends included).', type: 'counter' },
  batches_acked_total: { help: 'Batches acknowledged by the backend.', type: 'counter' },
  batches_rejected_total: {
    help: 'Batches the backend refused for good (an error that resending cannot fix); each is dropped and logged.',
    type: 'counter',
  },
  batches_retried_total: {
    help: 'Batches the backend could not store then (retryable error, e.g. its database away), kept and resent after a backoff.',
    type: 'counter',
  },
  batches_spooled: { help: 'Batches waiting for an acknowledgement.', type: 'gauge' },
  spool_dropped_total: {
    help: 'Unacknowledged batches (or capture ends) dropped because the spool was full (oldest first).',
    type: 'counter',
  },
  capture_ends_spooled: {
    help: 'Captures ended whose end the backend has not acknowledged yet (sent again after each reconnect).',
    type: 'gauge',
  },
  capture_ends_acked_total: { help: 'Capture ends acknowledged by the backend.', type: 'counter' },
  capture_ends_rejected_total: {
    help: 'Capture ends the backend refused for good; each is dropped and logged.',
    type: 'counter',
  },
  backend_connected: { help: '1 while the uplink to the backend is open and welcomed.', type: 'gauge' },
  backend_connect_failures_total: { help: 'Failed or lost backend connections.', type: 'counter' },
  captures_total: { help: 'Captures started by this agent.', type: 'counter' },
  upstream_up: { help: '1 when the last upstream probe succeeded.', type: 'gauge' },
} as const satisfies Record<string, MetricDefinition>;

export type MetricName = keyof typeof DEFINITIONS;

/** One counter or set value; hot paths keep the object and call `inc` on it (no name lookup per request). */
export class Counter {
  value = 0;

  /** Add `by` (default 1). */
  inc(by = 1): void {
    this.value += by;
  }
}

/** Counters and gauges of one agent. */
export class Metrics {
  private readonly values = Object.fromEntries(Object.keys(DEFINITIONS).map((name) => [name, new Counter()])) as Record<
    MetricName,
    Counter
  >;
  private readonly gauges = new Map<MetricName, () => number>();

  /** The counter itself, for code that counts on every request. */
  counter(name: MetricName): Counter {
    return this.values[name];
  }

  /** Add `by` (default 1) to a counter. */
  inc(name: MetricName, by = 1): void {
    this.values[name].inc(by);
  }

  /** Set a gauge to a value. */
  set(name: MetricName, value: number): void {
    this.values[name].value = value;
  }

  /** Read a gauge from a function each time metrics are rendered. */
  gauge(name: MetricName, read: () => number): void {
    this.gauges.set(name, read);
  }

  /** Current value (0 when never touched). */
  get(name: MetricName): number {
    const sameAs = (DEFINITIONS[name] as MetricDefinition).sameAs as MetricName | undefined;
    if (sameAs !== undefined) return this.get(sameAs);
    const read = this.gauges.get(name);
    return read ? read() : this.values[name].value;
  }

  /** Prometheus text exposition of every metric, `spectator_agent_` prefixed. */
  render(): string {
    const lines: string[] = [];
    for (const [name, definition] of Object.entries(DEFINITIONS) as [MetricName, MetricDefinition][]) {
      const full = `spectator_agent_${name}`;
      lines.push(`# HELP ${full} ${definition.help}`, `# TYPE ${full} ${definition.type}`, `${full} ${this.get(name)}`);
    }
    return `${lines.join('\n')}\n`;
  }
}
