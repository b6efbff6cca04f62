import { spawnSync } from 'node:child_process';
import { parseAgentConfig } from '@spectator/agent';
import { parse } from 'yaml';
import { parseCheckOptions } from '../../agent/src/check';
import { readRepoFile } from './support/repo';

const job = (
  parse(readRepoFile('deploy/gitlab-ci.yml')) as Record<
    string,
    { rules: { if: string }[]; script: string[]; variables: Record<string, string> }
  >
).spectator!;
const mergeRequest = {
  CI: 'true',
  CI_MERGE_REQUEST_IID: '12',
  CI_COMMIT_SHA: 'm'.repeat(40),
  CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: 'a'.repeat(40),
  SPECTATOR_TOKEN: 't',
  SPECTATOR_READ_TOKEN: 'r',
  SPECTATOR_BACKEND_URL: 'https://spectator.example.com',
  SPECTATOR_PROJECT: 'shop',
};

/** The words of a script line as the shell splits them, variables expanded from `env`. */
function words(line: string, env: Record<string, string>): string[] {
  const result = spawnSync('bash', ['-c', `set -- ${line.replace(/\s*[>&|].*$/, '')}; printf '%s\\0' "$@"`], {
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
  });
  return result.stdout.split('\0').slice(0, -1);
}

describe('deploy/gitlab-ci.yml', () => {
  it('runs for merge requests, and every script line parses in bash', () => {
    expect(job.rules).toEqual([{ if: '$CI_PIPELINE_SOURCE == "merge_request_event"' }]);
    for (const line of job.script)
      expect({ line, status: spawnSync('bash', ['-n', '-c', line]).status }).toEqual({ line, status: 0 });
  });

  it("starts the app behind the agent as evidence of the merge request's head commit", () => {
    const line = job.script.find((each) => each.startsWith('spectator-agent --env'))!;
    const [, ...args] = words(line, mergeRequest);
    const config = parseAgentConfig(args, { ...mergeRequest, ...job.variables });
    expect(config.environment).toEqual({ kind: 'ci', pullRequest: '12', commit: 'a'.repeat(40) });
    expect(config.command).toEqual(['npm', 'start']);
    expect(`http://${config.listen.host}:${config.listen.port}`).toBe(job.variables.API_URL);
  });

  it('gates with the read token', () => {
    const line = job.script.find((each) => each.includes('spectator-agent check'))!;
    const [assignment, , , ...args] = line.split(' ');
    expect(assignment).toBe('SPECTATOR_TOKEN="$SPECTATOR_READ_TOKEN"');
    const options = parseCheckOptions(words(args.join(' '), mergeRequest), { ...mergeRequest, SPECTATOR_TOKEN: 'r' });
    expect(options).toMatchObject({
      project: 'shop',
      pullRequest: '12',
      token: 'r',
      failOn: ['undocumented', 'breaking'],
    });
  });

  it('skips a merge request from a fork (no token) with one line', () => {
    const line = job.script[0]!;
    const result = spawnSync('bash', ['-c', line], { env: { PATH: process.env.PATH }, encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(
      'Spectator skipped: no agent token (merge requests from forks get no protected variables).\n',
    );
  });
});
