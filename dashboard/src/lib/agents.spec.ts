import type { CaptureResponse } from '@spectator/shared';
import { agentsFromCaptures } from './agents';

function capture(id: string, kind: 'local' | 'ci' | 'staging', startedAt: string, endedAt: string | null, extra: Partial<CaptureResponse> = {}): CaptureResponse {
  return { id, environment: { kind, name: kind }, commit: `commit-${id}`, build: null, pullRequest: null, startedAt, endedAt, interactions: 0, undocumented: 0, diffs: 0, rules: [], ...extra };
}

describe('agentsFromCaptures', () => {
  it('gives one row per environment, pull request and build from its newest capture, newest first', () => {
    const rows = agentsFromCaptures([
      capture('a', 'local', '2026-01-01T10:00:00Z', '2026-01-01T10:05:00Z'),
      capture('b', 'local', '2026-01-01T10:05:00Z', null),
      capture('c', 'ci', '2026-01-01T09:00:00Z', '2026-01-01T09:10:00Z', { pullRequest: '7' }),
      capture('d', 'ci', '2026-01-01T11:00:00Z', '2026-01-01T11:10:00Z', { pullRequest: '8' }),
      capture('e', 'staging', '2026-01-01T08:00:00Z', '2026-01-01T08:30:00Z', { build: 's-1' }),
    ]);
    expect(rows.map((r) => [r.environment?.kind, r.pullRequest, r.build, r.commit, r.lastSeen, r.connected])).toEqual([
      ['ci', '8', null, 'commit-d', '2026-01-01T11:10:00Z', false],
      ['local', null, null, 'commit-b', '2026-01-01T10:05:00Z', true],
      ['ci', '7', null, 'commit-c', '2026-01-01T09:10:00Z', false],
      ['staging', null, 's-1', 'commit-e', '2026-01-01T08:30:00Z', false],
    ]);
  });

  it('does not count an older capture that never ended as connected', () => {
    const [row] = agentsFromCaptures([capture('old', 'local', '2026-01-01T09:00:00Z', null), capture('new', 'local', '2026-01-01T10:00:00Z', '2026-01-01T10:01:00Z')]);
    expect(row).toMatchObject({ commit: 'commit-new', connected: false, lastSeen: '2026-01-01T10:01:00Z' });
  });
});
