import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { ProjectRole } from '@spectator/shared';
import type { Person } from '../common/principal';
import { returningRows } from '../common/returning';

/** A row of `users`: a person as the provider described them, and when they signed in. */
export interface UserRow extends Omit<Person, 'instanceAdmin'> {
  createdAt: Date;
  lastSignInAt: Date;
}

/** The columns of a UserRow, of `users` under an alias. */
function userColumns(alias = 'users'): string {
  return `${alias}.id, ${alias}.issuer, ${alias}.subject, ${alias}.name, ${alias}.email, ${alias}.groups,
          ${alias}.created_at AS "createdAt", ${alias}.last_sign_in_at AS "lastSignInAt"`;
}
const USER_COLUMNS = userColumns();

/** The SQL of people. */
@Injectable()
export class UsersRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Creates the person of (issuer, subject) or updates what the provider now says about them. */
  async upsert(input: Omit<UserRow, 'id' | 'createdAt' | 'lastSignInAt'>): Promise<UserRow> {
    const rows: UserRow[] = await this.db.query(
      `INSERT INTO users (issuer, subject, name, email, groups) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (issuer, subject) DO UPDATE
         SET name = EXCLUDED.name, email = EXCLUDED.email, groups = EXCLUDED.groups, last_sign_in_at = now()
       RETURNING ${USER_COLUMNS}`,
      [input.issuer, input.subject, input.name, input.email, input.groups],
    );
    return rows[0] as UserRow;
  }

  async byId(id: string): Promise<UserRow | null> {
    const rows: UserRow[] = await this.db.query(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]);
    return rows[0] ?? null;
  }

  async byIds(ids: string[]): Promise<UserRow[]> {
    if (ids.length === 0) return [];
    return this.db.query(`SELECT ${USER_COLUMNS} FROM users WHERE id = ANY($1::uuid[])`, [ids]);
  }

  /** The person who signed in most recently with an email (case-insensitive), or null. */
  async byEmail(email: string): Promise<UserRow | null> {
    const rows: UserRow[] = await this.db.query(
      `SELECT ${USER_COLUMNS} FROM users WHERE lower(email) = lower($1) ORDER BY last_sign_in_at DESC LIMIT 1`,
      [email],
    );
    return rows[0] ?? null;
  }

  /** The roles a person holds in a project: as a member, and through each of their groups. */
  async rolesIn(projectId: string, userId: string, groups: string[]): Promise<ProjectRole[]> {
    const rows: Array<{ role: ProjectRole }> = await this.db.query(
      `SELECT role FROM project_members WHERE project_id = $1 AND user_id = $2
       UNION ALL
       SELECT role FROM project_group_roles WHERE project_id = $1 AND group_name = ANY($3::text[])`,
      [projectId, userId, groups],
    );
    return rows.map((row) => row.role);
  }

  /** Projects where a person holds some role. */
  async projectIdsOf(userId: string, groups: string[]): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT project_id AS id FROM project_members WHERE user_id = $1
       UNION
       SELECT project_id FROM project_group_roles WHERE group_name = ANY($2::text[])`,
      [userId, groups],
    );
    return rows.map((row) => row.id);
  }

  /** A project's members with the role an admin gave them, by name. */
  async members(projectId: string): Promise<Array<UserRow & { role: ProjectRole; memberSince: Date }>> {
    return this.db.query(
      `SELECT ${userColumns('u')}, m.role, m.created_at AS "memberSince"
         FROM project_members m JOIN users u ON u.id = m.user_id
        WHERE m.project_id = $1 ORDER BY lower(coalesce(u.name, u.email, u.subject)), u.id`,
      [projectId],
    );
  }

  /** Gives a person a role in a project (replacing the one they had). @returns the role they had, if any */
  async setMember(projectId: string, userId: string, role: ProjectRole): Promise<ProjectRole | null> {
    const rows: Array<{ before: ProjectRole | null }> = await this.db.query(
      `WITH before AS (SELECT role FROM project_members WHERE project_id = $1 AND user_id = $2)
       INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, $3)
       ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role
       RETURNING (SELECT role FROM before) AS before`,
      [projectId, userId, role],
    );
    return rows[0]?.before ?? null;
  }

  /** @returns the role the person had, or null when they were no member */
  async removeMember(projectId: string, userId: string): Promise<ProjectRole | null> {
    const rows = await returningRows<{ role: ProjectRole }>(
      this.db,
      'DELETE FROM project_members WHERE project_id = $1 AND user_id = $2 RETURNING role',
      [projectId, userId],
    );
    return rows[0]?.role ?? null;
  }

  async groupRoles(projectId: string): Promise<Array<{ group: string; role: ProjectRole }>> {
    return this.db.query(
      `SELECT group_name AS "group", role FROM project_group_roles WHERE project_id = $1 ORDER BY group_name`,
      [projectId],
    );
  }

  /** Replaces a project's group mapping as a whole. */
  async replaceGroupRoles(projectId: string, mapping: Array<{ group: string; role: ProjectRole }>): Promise<void> {
    await this.db.transaction(async (manager) => {
      await manager.query('DELETE FROM project_group_roles WHERE project_id = $1', [projectId]);
      if (mapping.length > 0)
        await manager.query(
          `INSERT INTO project_group_roles (project_id, group_name, role)
           SELECT $1, x.group_name, x.role FROM unnest($2::text[], $3::text[]) AS x(group_name, role)`,
          [projectId, mapping.map((entry) => entry.group), mapping.map((entry) => entry.role)],
        );
    });
  }
}
