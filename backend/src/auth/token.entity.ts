import type { EnvironmentKind, TokenScope } from '@spectator/shared';
import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('tokens')
export class TokenEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** `null` only for the bootstrap admin token, which spans every project. */
  @Column({ name: 'project_id', type: 'uuid', nullable: true })
  projectId: string | null;

  @Column('text')
  name: string;

  @Column('text')
  scope: TokenScope;

  /** Environment kinds an agent token may report; `null` = any. */
  @Column({ type: 'text', array: true, nullable: true })
  environments: EnvironmentKind[] | null;

  /** SHA-256 (hex) of the token; the clear token is never stored. */
  @Column({ name: 'token_hash', type: 'text' })
  tokenHash: string;

  @Column({ name: 'created_at', type: 'timestamptz', insert: false, update: false })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  /** The person who made the token; `null` when a token made it. */
  @Column({ name: 'created_by', type: 'uuid', nullable: true })
  createdBy: string | null;

  /** When the token stops working on its own; `null` = never. */
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;
}
