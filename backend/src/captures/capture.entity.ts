import type { EnvironmentKind } from '@spectator/shared';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One run of the observed app. The id is made by the agent, so a resent report is an upsert. */
@Entity('captures')
export class CaptureEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId: string;

  @Column({ name: 'agent_id', type: 'uuid', nullable: true })
  agentId: string | null;

  @Column({ name: 'environment_kind', type: 'text' })
  environmentKind: EnvironmentKind;

  @Column({ name: 'environment_name', type: 'text' })
  environmentName: string;

  @Column({ name: 'pull_request', type: 'text', nullable: true })
  pullRequest: string | null;

  @Column({ type: 'text', nullable: true })
  commit: string | null;

  @Column({ type: 'text', nullable: true })
  build: string | null;

  @Column('text')
  reason: string;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'ended_at', type: 'timestamptz', nullable: true })
  endedAt: Date | null;

  /** The `ignoreRequests` entries in effect, as the agent reported them. */
  @Column({ type: 'text', array: true })
  rules: string[];

  /** Requests that only got 404/405 on paths matching no template (noise, counted apart; docs/paths.md). */
  @Column({
    name: 'unmatched_requests',
    type: 'bigint',
    transformer: { to: (value: number) => value, from: (value: string | null) => Number(value ?? 0) },
  })
  unmatchedRequests: number;

  /** Distinct such paths, as the agent last counted them (never the paths themselves). */
  @Column({ name: 'unmatched_paths', type: 'integer' })
  unmatchedPaths: number;

  /** Requests of endpoints not kept because the capture had its cap of endpoints already (SPECTATOR_MAX_ENDPOINTS_PER_CAPTURE). */
  @Column({
    name: 'overflow_requests',
    type: 'bigint',
    transformer: { to: (value: number) => value, from: (value: string | null) => Number(value ?? 0) },
  })
  overflowRequests: number;
}
