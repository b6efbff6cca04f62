import { startAgent, type AgentOptions, type RunningAgent } from '../../src/agent';
import { createRootLogger } from '../../src/log';

/** Log lines the agent wrote, as text (for assertions, including the privacy ones). */
export class LogSink {
  readonly lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
  get text(): string {
    return this.lines.join('');
  }
  /** Parsed lines whose msg contains `fragment`. */
  find(fragment: string): Record<string, unknown>[] {
    return this.lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => String(entry.msg).includes(fragment));
  }
}

/**
 * An agent on 127.0.0.1:0 with fast timers and its logs kept in memory. `configPath` defaults to
 * a file that does not exist (no ignore rules).
 */
export async function startTestAgent(options: AgentOptions): Promise<RunningAgent & { logs: LogSink }> {
  const logs = new LogSink();
  const agent = await startAgent({
    listen: '127.0.0.1:0',
    configPath: '/nonexistent/service.yml',
    // The agent's own root logger (with its redaction), writing into memory.
    logger: createRootLogger('debug', logs),
    ...options,
    tuning: {
      flushIntervalMs: 100,
      probeIntervalMs: 100,
      configPollMs: 50,
      heartbeatMs: 1_000,
      backoffMinMs: 20,
      backoffMaxMs: 200,
      ackWaitMs: 2_000,
      shutdownGraceMs: 2_000,
      commandStdio: 'ignore',
      restartDelayMs: 50,
      ...options.tuning,
    },
  });
  return Object.assign(agent, { logs });
}
