import type { EndpointShapes, ParametersDoc, ShapeChange } from '@spectator/shared';
import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One version of an endpoint's behaviour; every version comes from an approved proposal. */
@Entity('endpoint_versions')
export class EndpointVersionEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'endpoint_id', type: 'uuid' })
  endpointId: string;

  @Column('integer')
  major: number;

  @Column('integer')
  minor: number;

  @Column('text')
  description: string;

  @Column({ type: 'jsonb', nullable: true })
  request: EndpointShapes['request'];

  @Column('jsonb')
  responses: EndpointShapes['responses'];

  /** Documented query parameters and request headers; null when this version does not document them. */
  @Column({ type: 'jsonb', nullable: true })
  parameters: ParametersDoc | null;

  /** The changes from the previous version (empty for 1.0). */
  @Column('jsonb')
  changes: ShapeChange[];

  @Column({ name: 'proposal_id', type: 'uuid', nullable: true })
  proposalId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', insert: false, update: false })
  createdAt: Date;
}
