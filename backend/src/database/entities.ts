import { TokenEntity } from '../auth/token.entity';
import { ProjectEntity } from '../projects/project.entity';

/**
 * Entities mapped by TypeORM: only the tables still read and written through TypeORM repositories
 * (projects by `ProjectsService`, tokens by `TokensService`). Every other table is reached with
 * raw SQL through its domain's repository (`x.repository.ts`), whose row types are plain interfaces.
 */
export const ENTITIES = [ProjectEntity, TokenEntity];
