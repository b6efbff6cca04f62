import type { EntityManager } from 'typeorm';

/** What runs SQL: the data source, or a transaction's manager (so a repository's statement can join a transaction). */
export type Queryable = Pick<EntityManager, 'query'>;
