import type { ProposalStepName } from '@spectator/shared';
import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A proposed change of documented behaviour (an "API pull request"). */
@Entity('proposals')
export class ProposalEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId: string;

  @Column('text')
  title: string;

  @Column('text')
  description: string;

  @Column('text')
  status: 'Open' | ProposalStepName;

  @Column({ name: 'source_capture_id', type: 'uuid', nullable: true })
  sourceCaptureId: string | null;

  @Column({ name: 'created_by', type: 'text', nullable: true })
  createdBy: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', insert: false, update: false })
  createdAt: Date;

  @Column({ name: 'approved_by', type: 'text', nullable: true })
  approvedBy: string | null;

  @Column({ name: 'approved_at', type: 'timestamptz', nullable: true })
  approvedAt: Date | null;
}

/** One lifecycle step of a proposal, with its actor or evidence. */
@Entity('proposal_steps')
export class ProposalStepEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'proposal_id', type: 'uuid' })
  proposalId: string;

  @Column('text')
  step: ProposalStepName;

  @Column({ type: 'text', nullable: true })
  actor: string | null;

  @Column({ type: 'timestamptz' })
  at: Date;

  @Column({ name: 'pull_request', type: 'text', nullable: true })
  pullRequest: string | null;

  @Column({ type: 'text', nullable: true })
  build: string | null;

  @Column({ type: 'text', nullable: true })
  commit: string | null;

  @Column({ name: 'capture_id', type: 'uuid', nullable: true })
  captureId: string | null;
}
