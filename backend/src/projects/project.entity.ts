/**
 * A project as stored (`projects`), read and written with raw SQL by `projects.repository.ts`. The
 * name is from its TypeORM days; it is a plain row type now, the one every domain's routes get
 * (`@CurrentProject()`).
 */
export class ProjectEntity {
  id: string;

  slug: string;

  name: string;

  /** Four eyes: a proposal's author cannot approve it. */
  fourEyes: boolean;

  createdAt: Date;
}
