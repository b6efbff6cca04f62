import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { Person } from '../common/principal';

/** A row of `users`: a person as the provider described them, and when they signed in. */
export interface UserRow extends Omit<Person, 'instanceAdmin'> {
  createdAt: Date;
  lastSignInAt: Date;
}

const USER_COLUMNS = `id, issuer, subject, name, email, groups, created_at AS "createdAt", last_sign_in_at AS "lastSignInAt"`;

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
}
