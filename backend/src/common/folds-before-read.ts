import { Injectable } from '@nestjs/common';
import type { AgentEnvironment } from '@spectator/shared';

/** A project as a fold needs it: its id, and its slug for the events the fold publishes. */
export interface FoldProject {
  id: string;
  slug: string;
}

/** Resolves once an environment row's batches queued before the call are folded. */
export type FoldWait = (project: FoldProject, environment: AgentEnvironment) => Promise<void>;

/**
 * What a read waits for before it reads evidence that folds make (issue 20): the CI gate reads a
 * pull request's evidence after its agent stopped, and the agent's batches are acknowledged at
 * their commit, folded after. The ingest module's folder provides the wait; the readers (the CI
 * gate, the runtime gate) only call it, so neither depends on the module that folds.
 */
@Injectable()
export class FoldsBeforeRead {
  private wait: FoldWait | null = null;

  /** The folder's wait, set once it can fold. */
  provide(wait: FoldWait): void {
    this.wait = wait;
  }

  /**
   * Resolves once the batches of `environment`'s row queued before this call are folded (at once
   * where nothing folds: no folder in this process).
   * @throws DomainError FoldPending when they could not be folded in time.
   */
  async before(project: FoldProject, environment: AgentEnvironment): Promise<void> {
    await this.wait?.(project, environment);
  }
}
