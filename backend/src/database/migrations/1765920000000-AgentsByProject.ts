import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Agents and their connections keyed by project (issue 20, "Past one PostgreSQL"): a connection
 * carries its agent's project, and the foreign keys of connections and captures to agents pair
 * project with project, so a distributed PostgreSQL (Citus, by `project_id`) could keep a
 * project's agents, connections and captures on one node. A capture's agent is still set to NULL
 * when its agent goes, its project never. Both keys start with the id: connections are refreshed
 * and closed by id alone, and an agent found by id when a connection opens.
 */
export class AgentsByProject1765920000000 implements MigrationInterface {
  name = 'AgentsByProject1765920000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE agent_connections ADD COLUMN project_id uuid');
    await q.query('UPDATE agent_connections k SET project_id = a.project_id FROM agents a WHERE a.id = k.agent_id');
    await q.query(`
      ALTER TABLE agent_connections
        ALTER COLUMN project_id SET NOT NULL,
        DROP CONSTRAINT agent_connections_agent_id_fkey`);
    await q.query('ALTER TABLE captures DROP CONSTRAINT captures_agent_id_fkey');
    await q.query('ALTER TABLE agents DROP CONSTRAINT agents_pkey, ADD PRIMARY KEY (id, project_id)');
    await q.query(`
      ALTER TABLE agent_connections
        DROP CONSTRAINT agent_connections_pkey, ADD PRIMARY KEY (id, project_id),
        ADD CONSTRAINT agent_connections_agent_fk FOREIGN KEY (project_id, agent_id)
          REFERENCES agents (project_id, id) ON DELETE CASCADE`);
    await q.query(`
      ALTER TABLE captures ADD CONSTRAINT captures_agent_fk FOREIGN KEY (project_id, agent_id)
        REFERENCES agents (project_id, id) ON DELETE SET NULL (agent_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE captures DROP CONSTRAINT captures_agent_fk');
    await q.query(`
      ALTER TABLE agent_connections
        DROP CONSTRAINT agent_connections_agent_fk,
        DROP CONSTRAINT agent_connections_pkey, ADD PRIMARY KEY (id)`);
    await q.query('ALTER TABLE agents DROP CONSTRAINT agents_pkey, ADD PRIMARY KEY (id)');
    await q.query(
      'ALTER TABLE captures ADD CONSTRAINT captures_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES agents (id) ON DELETE SET NULL',
    );
    await q.query(`
      ALTER TABLE agent_connections
        ADD CONSTRAINT agent_connections_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES agents (id) ON DELETE CASCADE,
        DROP COLUMN project_id`);
  }
}
