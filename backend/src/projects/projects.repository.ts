import type { Queryable } from '../common/queryable';
import type { ProjectEntity } from './project.entity';

/** The columns of `ProjectEntity`. */
const COLUMNS = `id, slug, name, four_eyes AS "fourEyes", created_at AS "createdAt"`;

/**
 * The SQL of projects (`projects`), raw SQL through `Queryable` as every other domain's: the
 * service passes its data source, a caller's transaction passes its manager (`fourEyesNow`).
 */
export const projectsRepository = {
  /** Inserts a project. Throws the unique violation of `projects.slug` when the slug is taken. */
  async insert(db: Queryable, slug: string, name: string): Promise<ProjectEntity> {
    const [project] = (await db.query(`INSERT INTO projects (slug, name) VALUES ($1, $2) RETURNING ${COLUMNS}`, [
      slug,
      name,
    ])) as ProjectEntity[];
    if (!project) throw new Error('project insert returned nothing');
    return project;
  },

  /** Projects by id (`null`: all of them), by slug. */
  list(db: Queryable, ids: readonly string[] | null): Promise<ProjectEntity[]> {
    return ids === null
      ? db.query(`SELECT ${COLUMNS} FROM projects ORDER BY slug`)
      : db.query(`SELECT ${COLUMNS} FROM projects WHERE id = ANY($1::uuid[]) ORDER BY slug`, [ids]);
  },

  async bySlug(db: Queryable, slug: string): Promise<ProjectEntity | null> {
    const [project] = (await db.query(`SELECT ${COLUMNS} FROM projects WHERE slug = $1`, [slug])) as ProjectEntity[];
    return project ?? null;
  },

  async byId(db: Queryable, id: string): Promise<ProjectEntity | null> {
    const [project] = (await db.query(`SELECT ${COLUMNS} FROM projects WHERE id = $1`, [id])) as ProjectEntity[];
    return project ?? null;
  },

  async setFourEyes(db: Queryable, id: string, fourEyes: boolean): Promise<void> {
    await db.query('UPDATE projects SET four_eyes = $2 WHERE id = $1', [id, fourEyes]);
  },

  /** Whether a project requires four eyes, its row share-locked until `db`'s transaction ends. */
  async fourEyesNow(db: Queryable, id: string): Promise<boolean> {
    const [row] = (await db.query('SELECT four_eyes AS "fourEyes" FROM projects WHERE id = $1 FOR SHARE', [
      id,
    ])) as Array<{ fourEyes: boolean }>;
    return row?.fourEyes ?? false;
  },
};
