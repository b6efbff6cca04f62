import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { EnvironmentKind } from '@spectator/shared';
import type { DataSource } from 'typeorm';
import { queryPrepared } from '../common/prepared';
import { returningRows } from '../common/returning';

/** An agent of a project with its newest capture's environment (null columns when it has none). */
export interface AgentRow {
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

/** An agent whose connection was opened or closed, with its project. */
export interface ConnectedAgent {
  id: string;
  projectId: string;
}

/** An agent as its hello names it. */
export interface HelloAgent {
  projectId: string;
  agentKey: string;
  tokenId: string | null;
  version: string;
  environmentKind: EnvironmentKind;
}

/** The SQL of agents and their connections (`agents`, `agent_connections`), raw SQL in one style. */
@Injectable()
export class AgentsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Records an agent's hello: a new agent key is inserted; one already in use is taken over (token,
   * version, environment kind, seen now) only when `allowed` is null or holds its environment kind.
   * @returns the agent's row id, or null when the key is another environment's agent.
   */
  async claim(agent: HelloAgent, allowed: readonly EnvironmentKind[] | null): Promise<string | null> {
    const [row] = (await this.db.query(
      `INSERT INTO agents (project_id, agent_key, token_id, agent_version, environment_kind)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT ON CONSTRAINT agents_key_unique
       DO UPDATE SET token_id = EXCLUDED.token_id, agent_version = EXCLUDED.agent_version,
                     environment_kind = EXCLUDED.environment_kind, last_seen_at = now()
         WHERE $6::text[] IS NULL OR agents.environment_kind = ANY($6::text[])
       RETURNING id`,
      [agent.projectId, agent.agentKey, agent.tokenId, agent.version, agent.environmentKind, allowed],
    )) as Array<{ id: string }>;
    return row?.id ?? null;
  }

  /** The environment kind of a project's agent, or null when it has no agent of that key. */
  async kindOf(projectId: string, agentKey: string): Promise<string | null> {
    const [row] = (await this.db.query(
      'SELECT environment_kind AS kind FROM agents WHERE project_id = $1 AND agent_key = $2',
      [projectId, agentKey],
    )) as Array<{ kind: string }>;
    return row?.kind ?? null;
  }

  /**
   * A project's agents, the most recently seen first (at most `limit`), each with its newest
   * capture and whether a connection refreshed within `staleAfter` (an interval) is open.
   */
  list(projectId: string, limit: number, staleAfter: string): Promise<AgentRow[]> {
    return this.db.query(
      `SELECT a.id, a.agent_key AS "agentKey", a.agent_version AS version, a.environment_kind AS "agentKind",
              a.first_seen_at AS "firstSeen", a.last_seen_at AS "lastSeen",
              c.id AS "currentCaptureId", c.environment_kind AS kind, c.environment_name AS name,
              c.pull_request AS "pullRequest", c.commit, c.build,
              EXISTS (SELECT 1 FROM agent_connections k
                       WHERE k.project_id = a.project_id AND k.agent_id = a.id AND k.closed_at IS NULL AND k.heartbeat_at > now() - $3::interval) AS connected
         FROM agents a
         LEFT JOIN LATERAL (SELECT id, environment_kind, environment_name, pull_request, commit, build FROM captures
                             WHERE project_id = a.project_id AND agent_id = a.id ORDER BY started_at DESC, id DESC LIMIT 1) c ON true
        WHERE a.project_id = $1
        ORDER BY a.last_seen_at DESC, a.id DESC
        LIMIT $2`,
      [projectId, limit, staleAfter],
    );
  }

  /**
   * Opens a connection of an agent, first dropping its finished connections and those not
   * refreshed within `staleAfter` (an interval) so the table stays small.
   * @returns the connection's id and the agent's project, or null when the agent does not exist.
   */
  async openConnection(agentId: string, staleAfter: string): Promise<{ id: string; projectId: string } | null> {
    const [row] = (await this.db.query(
      `WITH gone AS (DELETE FROM agent_connections WHERE agent_id = $1 AND (closed_at IS NOT NULL OR heartbeat_at < now() - $2::interval))
       INSERT INTO agent_connections (project_id, agent_id) SELECT project_id, id FROM agents WHERE id = $1
       RETURNING id, project_id AS "projectId"`,
      [agentId, staleAfter],
    )) as Array<{ id: string; projectId: string }>;
    return row ?? null;
  }

  /** Closes a connection and marks its agent seen now. @returns the agent (none when the connection is gone). */
  closeConnection(connectionId: string): Promise<ConnectedAgent[]> {
    return returningRows<ConnectedAgent>(
      this.db,
      `WITH c AS (UPDATE agent_connections SET closed_at = now(), heartbeat_at = now() WHERE id = $1 RETURNING project_id, agent_id)
       UPDATE agents SET last_seen_at = now() WHERE (id, project_id) IN (SELECT agent_id, project_id FROM c) RETURNING id, project_id AS "projectId"`,
      [connectionId],
    );
  }

  /** Refreshes an open connection's heartbeat and marks its agent seen now (nothing for a closed one). */
  async heartbeat(connectionId: string): Promise<void> {
    // Named: every connected agent's heartbeat runs it, which unnamed was parsed and planned every time.
    await queryPrepared(
      this.db,
      'spectator_heartbeat',
      `WITH c AS (UPDATE agent_connections SET heartbeat_at = now() WHERE id = $1 AND closed_at IS NULL RETURNING project_id, agent_id)
       UPDATE agents SET last_seen_at = now() WHERE (id, project_id) IN (SELECT agent_id, project_id FROM c)`,
      [connectionId],
    );
  }
}
