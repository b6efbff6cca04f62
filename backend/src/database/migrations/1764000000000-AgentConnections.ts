import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Agent connections, so any replica can tell whether an agent is connected: the replica holding
 * the WebSocket records the connection on hello, refreshes `heartbeat_at` while it stays open and
 * sets `closed_at` on close. A connection whose replica died keeps `closed_at` NULL, so it counts
 * as connected only while its heartbeat is recent. The captures index finds an agent's current
 * capture (its newest) without scanning the project's captures.
 */
export class AgentConnections1764000000000 implements MigrationInterface {
  name = 'AgentConnections1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE agent_connections (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        opened_at timestamptz NOT NULL DEFAULT now(),
        heartbeat_at timestamptz NOT NULL DEFAULT now(),
        closed_at timestamptz
      )`);
    await q.query('CREATE INDEX agent_connections_agent_idx ON agent_connections (agent_id)');
    await q.query('CREATE INDEX captures_agent_started_idx ON captures (agent_id, started_at DESC, id)');
    await q.query('CREATE INDEX agents_project_last_seen_idx ON agents (project_id, last_seen_at DESC, id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX agents_project_last_seen_idx');
    await q.query('DROP INDEX captures_agent_started_idx');
    await q.query('DROP TABLE agent_connections');
  }
}
