import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { AgentResponse, EnvironmentKind } from '@spectator/shared';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import type { ProjectEntity } from '../projects/project.entity';
import { EventsService } from '../events/events.service';
import { RUNTIME, type Runtime } from '../config/runtime';
import { returningRows } from '../common/returning';

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

interface AgentRow {
  id: string;
  agentKey: string;
  version: string;
  agentKind: EnvironmentKind;
  firstSeen: Date;
  lastSeen: Date;
  currentCaptureId: string | null;
  kind: EnvironmentKind | null;
  name: string | null;
  pullRequest: string | null;
  commit: string | null;
  build: string | null;
  connected: boolean;
}

/**
 * Agents seen by a project and whether each is connected now. Connections live in the database
 * (not in a replica's memory) so every replica answers the same.
 */
@Injectable()
export class AgentsService {
  private readonly log: Logger;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(RUNTIME) runtime: Runtime,
    private readonly events: EventsService,
  ) {
    this.log = runtime.log.child({ module: 'agents' });
  }

  /** Agents of a project, the most recently seen first (at most `limit`). */
  async list(project: ProjectEntity, limit: number): Promise<AgentResponse[]> {
    const rows: AgentRow[] = await this.db.query(
      `SELECT a.id, a.agent_key AS "agentKey", a.agent_version AS version, a.environment_kind AS "agentKind",
              a.first_seen_at AS "firstSeen", a.last_seen_at AS "lastSeen",
              c.id AS "currentCaptureId", c.environment_kind AS kind, c.environment_name AS name,
              c.pull_request AS "pullRequest", c.commit, c.build,
              EXISTS (SELECT 1 FROM agent_connections k
                       WHERE k.agent_id = a.id AND k.closed_at IS NULL AND k.heartbeat_at > now() - $3::interval) AS connected
         FROM agents a
         LEFT JOIN LATERAL (SELECT id, environment_kind, environment_name, pull_request, commit, build FROM captures
                             WHERE agent_id = a.id ORDER BY started_at DESC, id DESC LIMIT 1) c ON true
        WHERE a.project_id = $1
        ORDER BY a.last_seen_at DESC, a.id DESC
        LIMIT $2`,
      [project.id, limit, STALE_INTERVAL],
    );
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
      const agents = await returningRows<{ id: string; projectId: string }>(
        this.db,
        `WITH c AS (UPDATE agent_connections SET closed_at = now(), heartbeat_at = now() WHERE id = $1 RETURNING agent_id)
         UPDATE agents SET last_seen_at = now() WHERE id IN (SELECT agent_id FROM c) RETURNING id, project_id AS "projectId"`,
        [id],
      );
      for (const row of agents)
        await this.events.publish(row.projectId, { type: 'agent.connection', agentId: row.id, connected: false });
    };
    return {
      open: (agentRowId) =>
        run('open', async () => {
          if (closed) return;
          await closeConnection();
          // Drop this agent's finished or abandoned connections so the table stays small.
          const [row] = (await this.db.query(
            `WITH gone AS (DELETE FROM agent_connections WHERE agent_id = $1 AND (closed_at IS NOT NULL OR heartbeat_at < now() - $2::interval))
             INSERT INTO agent_connections (agent_id) VALUES ($1) RETURNING id, (SELECT project_id FROM agents WHERE id = $1) AS "projectId"`,
            [agentRowId, STALE_INTERVAL],
          )) as Array<{ id: string; projectId: string }>;
          connectionId = row?.id ?? null;
          if (row)
            await this.events.publish(row.projectId, {
              type: 'agent.connection',
              agentId: agentRowId,
              connected: true,
            });
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
    await this.db.query(
      `WITH c AS (UPDATE agent_connections SET heartbeat_at = now() WHERE id = $1 AND closed_at IS NULL RETURNING agent_id)
       UPDATE agents SET last_seen_at = now() WHERE id IN (SELECT agent_id FROM c)`,
      [connectionId],
    );
  }
}
