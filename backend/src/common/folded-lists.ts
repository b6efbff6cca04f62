import type { EntityManager } from 'typeorm';

/**
 * What a module makes of one of a fold's lists (runtime minutes, consumer days): each taken batch's
 * list added as the fold reads it (`add`, folded at once), then their sums written in the fold's
 * transaction (`write`, for environment row `row`). In `common/` because the evidence fold calls the
 * consumers and runtime modules' folds, and they must not import `evidence/` back.
 */
export interface FoldedLists<T, R> {
  add(items: Iterable<T>): void;
  write(manager: Pick<EntityManager, 'query'>, row: R): Promise<void>;
}
