import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('projects')
export class ProjectEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column('text')
  slug: string;

  @Column('text')
  name: string;

  /** Four eyes: a proposal's author cannot approve it. */
  @Column({ name: 'four_eyes', type: 'boolean', default: false })
  fourEyes: boolean;

  @Column({ name: 'created_at', type: 'timestamptz', insert: false, update: false })
  createdAt: Date;
}
