import { TokenEntity } from '../auth/token.entity';

/**
 * Entities mapped by TypeORM: only the tables still read and written through TypeORM repositories
 * (tokens by `TokensService`). Every other table is reached with
 * raw SQL through its domain's repository (`x.repository.ts`), whose row types are plain interfaces.
 */
export const ENTITIES = [TokenEntity];
