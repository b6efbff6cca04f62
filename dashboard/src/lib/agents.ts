import type { CaptureResponse } from '@spectator/shared';
import type { AgentResponse } from '../api/types';

/**
 * Agents seen, read from captures when the backend has no agents list: every capture is one run of
 * an agent, so one row per environment, pull request and build, described by its newest capture
 * (commit; last seen when it ended, or when it started while it runs; running means connected).
 * Rows are ordered by their newest capture's start, newest first.
 */
export function agentsFromCaptures(captures: readonly CaptureResponse[]): AgentResponse[] {
  const byRun = new Map<string, AgentResponse>();
  for (const capture of [...captures].sort((a, b) => b.startedAt.localeCompare(a.startedAt))) {
    const key = JSON.stringify([capture.environment.kind, capture.environment.name, capture.pullRequest, capture.build]);
    if (byRun.has(key)) continue;
    byRun.set(key, {
      id: key,
      environment: capture.environment,
      pullRequest: capture.pullRequest,
      commit: capture.commit,
      build: capture.build,
      lastSeen: capture.endedAt ?? capture.startedAt,
      connected: capture.endedAt === null,
    });
  }
  return [...byRun.values()];
}
