import type { CiSummaryResponse } from '@spectator/shared';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CHECK_EXIT, judgeCiSummary, parseCheckOptions, runCheck } from './check';
import { ConfigError } from './config';

const base = ['--backend', 'http://127.0.0.1:1', '--token', 't', '--project', 'demo', '--pr', '12'];

const summary = (overrides: Partial<CiSummaryResponse> = {}): CiSummaryResponse => ({ pullRequest: '12', commit: 'abc', captures: ['c1'], undocumented: [], diffs: [], breaking: false, ...overrides });
const diff = (breaking: boolean): CiSummaryResponse['diffs'][number] => ({
  endpointId: 'e',
  method: 'GET',
  path: '/users',
  version: '1.0',
  interactions: 3,
  breaking,
  changes: [{ change: breaking ? 'removed' : 'added', in: 'response', status: 200, at: '$.name', breaking }],
});

describe('parseCheckOptions', () => {
  it('reads flags, then environment variables, then the CI pull request', () => {
    expect(parseCheckOptions(['--backend=wss://spectator.example.com/', '--fail-on', 'diffs'], { SPECTATOR_TOKEN: 'tok', SPECTATOR_PROJECT: 'p', GITHUB_REF: 'refs/pull/77/merge' })).toEqual({
      backend: 'https://spectator.example.com',
      token: 'tok',
      project: 'p',
      pullRequest: '77',
      failOn: ['diffs'],
    });
    expect(parseCheckOptions(base, {}).failOn).toEqual(['undocumented', 'breaking']);
  });

  it('names every problem at once', () => {
    let error: unknown;
    try {
      parseCheckOptions(['--backend', 'ftp://x', '--pr', '1 2', '--fail-on', 'undocumented,slow', '--verbose'], {});
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'unknown option --verbose',
      '--backend "ftp://x" must be an http(s):// URL',
      '--token (or SPECTATOR_TOKEN) is required',
      '--project (or SPECTATOR_PROJECT) is required',
      '--pr "1 2" is not a pull request number',
      '--fail-on "slow" must be one of undocumented, breaking, diffs',
    ]);
  });
});

describe('judgeCiSummary', () => {
  it.each([
    ['nothing found', summary(), ['undocumented', 'breaking'], true, 'PASSED'],
    ['an undocumented endpoint', summary({ undocumented: [{ method: 'POST', path: '/users', interactions: 2, count: 4 }] }), ['undocumented'], false, 'FAILED: 1 undocumented endpoint(s)'],
    ['an undocumented endpoint when only breaking diffs fail', summary({ undocumented: [{ method: 'POST', path: '/users', interactions: 2, count: 4 }] }), ['breaking'], true, 'POST /users  (2 interaction(s))'],
    ['a non-breaking diff by default', summary({ diffs: [diff(false)] }), ['undocumented', 'breaking'], true, 'added response 200 $.name'],
    ['a non-breaking diff with --fail-on diffs', summary({ diffs: [diff(false)] }), ['diffs'], false, 'FAILED: 1 diff(s)'],
    ['a breaking diff', summary({ diffs: [diff(true)], breaking: true }), ['breaking'], false, 'GET /users  documented 1.0  BREAKING'],
  ] as const)('%s', (_name, input, failOn, passed, text) => {
    const verdict = judgeCiSummary(input, failOn);
    expect(verdict.passed).toBe(passed);
    expect(verdict.text).toContain(text);
  });
});

describe('runCheck', () => {
  it('exits 2 with the reason when the backend refuses or cannot be reached', async () => {
    const server = createServer((_request, response) => {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ statusCode: 404, error: 'Not Found', message: 'pull request 12 has no CI capture in project demo' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    let output = '';
    const sink = { write: (text: string) => (output += text) };
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    expect(await runCheck(['--backend', url, ...base.slice(2)], {}, sink, sink)).toBe(CHECK_EXIT.error);
    expect(output).toContain('the backend answered 404: pull request 12 has no CI capture in project demo');
    await new Promise<void>((resolve) => server.close(() => resolve()));
    output = '';
    expect(await runCheck(['--backend', url, ...base.slice(2)], {}, sink, sink)).toBe(CHECK_EXIT.error);
    expect(output).toContain('cannot reach the backend');
    output = '';
    expect(await runCheck(['--pr', '1'], {}, sink, sink)).toBe(CHECK_EXIT.error);
    expect(output).toContain('--backend (or SPECTATOR_BACKEND_URL) is required');
  });
});
