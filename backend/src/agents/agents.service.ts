import { Inject, Injectable } from '@nestjs/common';
import type { AgentResponse, EnvironmentKind } from '@spectator/shared';
import type { Logger } from 'pino';
import type { ProjectEntity } from '../projects/project.entity';
import { EventsService } from '../events/events.service';
import { RUNTIME, type Runtime } from '../config/runtime';
import { AgentsRepository, type HelloAgent } from './agents.repository';

/** How often an open connection refreshes its heartbeat: one UPDATE per agent per interval. */
export const HEARTBEAT_INTERVAL_MS = 30_000;
/** A connection not refreshed for this long counts as gone (its replica died): three missed heartbeats. */
export const CONNECTION_STALE_MS = 3 * HEARTBEAT_INTERVAL_MS;

const STALE_INTERVAL = `${CONNECTION_STALE_MS} milliseconds`;

/** The connection of one WebSocket, as recorded for every replica to read. */
export interface AgentPresence {
  /** Records the connection of the agent that said hello (a second hello moves it to that agent). */
  open(agentRowId: string): Promise<void>;
  /** Records the close; later calls do nothing. */
  close(): Promise<void>;
}

/**
 * Agents seen by a project and whether each is connected now. Connections live in the database
 * (not in a replica's memory) so every replica answers the same.
 */
@Injectable()
export class AgentsService {
  private readonly log: Logger;

  constructor(
    private readonly agents: AgentsRepository,
    @Inject(RUNTIME) runtime: Runtime,
    private readonly events: EventsService,
  ) {
    this.log = runtime.log.child({ module: 'agents' });
  }

  /**
   * Records the agent of a hello. An agent key already in use is taken over only by a token that
   * may report that agent's environment (`allowed` null: any): a CI token cannot become the
   * production agent (and so reach its captures).
   * @returns the agent's row id, or the environment kind of the agent that holds the key (null if unknown).
   */
  async claim(
    agent: HelloAgent,
    allowed: readonly EnvironmentKind[] | null,
  ): Promise<{ id: string } | { heldBy: string | null }> {
    const id = await this.agents.claim(agent, allowed);
    if (id !== null) return { id };
    return { heldBy: await this.agents.kindOf(agent.projectId, agent.agentKey) };
  }

  /** Agents of a project, the most recently seen first (at most `limit`). */
  async list(project: ProjectEntity, limit: number): Promise<AgentResponse[]> {
    const rows = await this.agents.list(project.id, limit, STALE_INTERVAL);
    return rows.map((row) => ({
      id: row.id,
      agentKey: row.agentKey,
      version: row.version,
      // An agent always starts a capture with its hello; the agent row is the fallback.
      environment: { kind: row.kind ?? row.agentKind, name: row.name ?? row.agentKind },
      pullRequest: row.pullRequest,
      commit: row.commit,
      build: row.build,
      currentCaptureId: row.currentCaptureId,
      firstSeen: row.firstSeen.toISOString(),
      lastSeen: row.lastSeen.toISOString(),
      connected: row.connected,
    }));
  }

  /**
   * Presence of one WebSocket connection. Its writes run one after the other (a close waits for
   * the open); failures are logged, never thrown, so presence cannot break ingest. `heartbeatMs`
   * is shorter only in tests.
   */
  presence(heartbeatMs = HEARTBEAT_INTERVAL_MS): AgentPresence {
    let connectionId: string | null = null;
    let closed = false;
    let heartbeat: NodeJS.Timeout | null = null;
    let chain = Promise.resolve();
    const run = (what: string, work: () => Promise<void>): Promise<void> =>
      (chain = chain
        .then(work)
        .catch((error: unknown) => this.log.warn({ err: error }, `agent presence ${what} failed`)));
    const closeConnection = async (): Promise<void> => {
      if (connectionId === null) return;
      const id = connectionId;
      connectionId = null;
      const closedBy = await this.agents.closeConnection(id);
      // Coalesced: a Deployment's pods come and go together (one transaction per event queued on
      // PostgreSQL's notification lock, issue 20).
      for (const row of closedBy)
        this.events.publishSoon(row.projectId, { type: 'agent.connection', agentId: row.id, connected: false });
    };
    return {
      open: (agentRowId) =>
        run('open', async () => {
          if (closed) return;
          await closeConnection();
          const row = await this.agents.openConnection(agentRowId, STALE_INTERVAL);
          connectionId = row?.id ?? null;
          if (row)
            this.events.publishSoon(row.projectId, { type: 'agent.connection', agentId: agentRowId, connected: true });
          heartbeat ??= setInterval(() => void run('heartbeat', () => this.beat(connectionId)), heartbeatMs).unref();
        }),
      close: () => {
        if (closed) return chain;
        closed = true;
        if (heartbeat) clearInterval(heartbeat);
        return run('close', closeConnection);
      },
    };
  }

  private async beat(connectionId: string | null): Promise<void> {
    if (connectionId === null) return;
    await this.agents.heartbeat(connectionId);
  }
}
