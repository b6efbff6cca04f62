import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A documented (or being documented) method + path template of a project. */
@Entity('endpoints')
export class EndpointEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId: string;

  @Column('text')
  method: string;

  @Column('text')
  path: string;

  @Column('text')
  description: string;

  @Column({ name: 'current_version_id', type: 'uuid', nullable: true })
  currentVersionId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', insert: false, update: false })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
