import {
  type BlastRadiusResponse,
  type CiRuntimeResponse,
  type CiSummaryResponse,
  DEFAULT_REGRESSION_THRESHOLDS,
  LatencyHistogram,
} from '@spectator/shared';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  CHECK_ATTEMPTS,
  CHECK_EXIT,
  judgeCiSummary,
  judgeRuntime,
  markdownReport,
  parseCheckOptions,
  runCheck,
} from './check';
import { ConfigError } from './config';

const base = ['--backend', 'http://127.0.0.1:1', '--token', 't', '--project', 'demo', '--pr', '12'];

const noChange: CiSummaryResponse['againstProduction'] = {
  from: { environment: 'production', pullRequest: null },
  to: { environment: 'ci', pullRequest: '12' },
  breaking: false,
  endpoints: [],
};
const summary = (overrides: Partial<CiSummaryResponse> = {}): CiSummaryResponse => ({
  pullRequest: '12',
  commit: 'abc',
  captures: ['c1'],
  undocumented: [],
  diffs: [],
  breaking: false,
  againstProduction: noChange,
  ...overrides,
});
/** The pull request moves GET /users from production's 1.1 to 2.0 (dropping `name`) and adds GET /orders. */
const productionMoves: CiSummaryResponse['againstProduction'] = {
  ...noChange,
  breaking: true,
  endpoints: [
    {
      endpointId: 'e',
      method: 'GET',
      path: '/users',
      from: { version: '1.1', drift: false, build: 'p-1', pullRequest: null, commit: 'p' },
      to: { version: '2.0', drift: false, build: null, pullRequest: '12', commit: 'abc' },
      status: 'changed',
      breaking: true,
      changes: [{ change: 'removed', in: 'response', status: 200, at: '$.name', breaking: true }],
    },
    {
      endpointId: 'o',
      method: 'GET',
      path: '/orders',
      from: { version: 'N/A', drift: false, build: null, pullRequest: null, commit: null },
      to: { version: '1.0', drift: false, build: null, pullRequest: '12', commit: 'abc' },
      status: 'only in to',
      breaking: false,
      changes: [],
    },
  ],
};
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
    expect(
      parseCheckOptions(['--backend=wss://spectator.example.com/', '--fail-on', 'diffs'], {
        SPECTATOR_TOKEN: 'tok',
        SPECTATOR_PROJECT: 'p',
        GITHUB_REF: 'refs/pull/77/merge',
      }),
    ).toEqual({
      backend: 'https://spectator.example.com',
      token: 'tok',
      project: 'p',
      pullRequest: '77',
      failOn: ['diffs'],
      markdown: null,
      thresholds: DEFAULT_REGRESSION_THRESHOLDS,
      consumerDays: 30,
      productionDays: null,
      consumersBuild: null,
    });
    expect(parseCheckOptions([...base, '--consumers-build', 'p-2'], {}).consumersBuild).toBe('p-2');
    expect(parseCheckOptions(base, { SPECTATOR_CONSUMERS_BUILD: 'p-3' }).consumersBuild).toBe('p-3');
    expect(() => parseCheckOptions([...base, '--consumers-build', 'b'.repeat(201)], {})).toThrow(
      '--consumers-build must be a build name of at most 200 characters',
    );
    expect(parseCheckOptions([...base, '--consumer-days', '7'], {}).consumerDays).toBe(7);
    expect(parseCheckOptions(base, { SPECTATOR_CONSUMER_DAYS: '90' }).consumerDays).toBe(90);
    expect(() => parseCheckOptions([...base, '--consumer-days', '0'], {})).toThrow(
      '--consumer-days "0" must be a number of days from 1 to 400',
    );
    expect(parseCheckOptions([...base, '--production-days=30'], {}).productionDays).toBe(30);
    expect(parseCheckOptions(base, { SPECTATOR_PRODUCTION_DAYS: '14' }).productionDays).toBe(14);
    for (const bad of ['0', '401', '1.5', 'week', '-3'])
      expect(() => parseCheckOptions([...base, '--production-days', bad], {})).toThrow(
        `--production-days "${bad}" must be a whole number of days from 1 to 400`,
      );
    expect(parseCheckOptions([...base, '--markdown', 'report.md'], {}).markdown).toBe('report.md');
    expect(parseCheckOptions(base, { SPECTATOR_CHECK_MARKDOWN: 'env.md' }).markdown).toBe('env.md');
    expect(parseCheckOptions(base, {}).failOn).toEqual(['undocumented', 'breaking']);
  });

  it('reads the runtime thresholds: percent and points as fractions, milliseconds, counts', () => {
    expect(
      parseCheckOptions(
        [
          ...base,
          '--fail-on=latency-regression,error-rate',
          '--latency-threshold',
          '50',
          '--latency-floor=2',
          '--error-rate-threshold',
          '0.5',
          '--min-requests',
          '100',
          '--significance',
          '0.05',
        ],
        {},
      ),
    ).toMatchObject({
      failOn: ['latency-regression', 'error-rate'],
      thresholds: {
        latencyIncrease: 0.5,
        latencyFloorMs: 2,
        errorRateIncrease: 0.005,
        minRequests: 100,
        significance: 0.05,
      },
    });
    let error: unknown;
    try {
      parseCheckOptions([...base, '--latency-threshold', 'fast', '--min-requests', '2.5', '--significance', '1'], {});
    } catch (caught) {
      error = caught;
    }
    expect((error as ConfigError).problems).toEqual([
      '--latency-threshold "fast" must be a number from 0 to 10000',
      '--min-requests "2.5" must be an integer from 1 to 1000000000',
      '--significance "1" must be a number from 1e-12 to 0.5',
    ]);
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
      '--fail-on "slow" must be one of undocumented, breaking, diffs, production-breaking, latency-regression, error-rate, breaking-with-consumers',
    ]);
  });
});

/** The blast radius of `diff(true)`: GET /users 200 called by consumers with these labels (null: unnamed), 4 calls each. */
const usedBy = (labels: Array<string | null>): BlastRadiusResponse => {
  const consumers = labels.map((label, i) => ({
    consumer: `00000000000000${(0xa0 + i).toString(16)}`,
    label,
    calls: 4,
    share: 0.4,
    lastCall: '2026-11-27T10:00:00.000Z',
  }));
  return {
    environment: 'production',
    build: null,
    days: 30,
    since: '2026-10-29',
    parts: [
      { method: 'GET', path: '/users', status: 200, changes: diff(true).changes, calls: 10, otherCalls: 0, consumers },
    ],
    consumers: consumers.map(({ share: _share, ...rest }) => rest),
    otherCalls: 0,
  };
};

describe('judgeCiSummary', () => {
  it.each([
    ['nothing found', summary(), ['undocumented', 'breaking'], true, 'PASSED'],
    [
      'an undocumented endpoint',
      summary({ undocumented: [{ method: 'POST', path: '/users', interactions: 2, count: 4 }] }),
      ['undocumented'],
      false,
      'FAILED: 1 undocumented endpoint(s)',
    ],
    [
      'an undocumented endpoint when only breaking diffs fail',
      summary({ undocumented: [{ method: 'POST', path: '/users', interactions: 2, count: 4 }] }),
      ['breaking'],
      true,
      'POST /users  (2 interaction(s))',
    ],
    [
      'a non-breaking diff by default',
      summary({ diffs: [diff(false)] }),
      ['undocumented', 'breaking'],
      true,
      'added response 200 $.name',
    ],
    [
      'a non-breaking diff with --fail-on diffs',
      summary({ diffs: [diff(false)] }),
      ['diffs'],
      false,
      'FAILED: 1 diff(s)',
    ],
    [
      'a breaking diff',
      summary({ diffs: [diff(true)], breaking: true }),
      ['breaking'],
      false,
      'GET /users  documented 1.0  BREAKING',
    ],
    [
      'a version change for production, reported',
      summary({ againstProduction: productionMoves }),
      ['undocumented', 'breaking'],
      true,
      'Against production (2):\n    GET /users  1.1 → 2.0  BREAKING\n      - removed response 200 $.name (breaking)\n    GET /orders  N/A → 1.0 (not in production yet)',
    ],
    [
      'a version change breaking production, with --fail-on production-breaking',
      summary({ againstProduction: productionMoves }),
      ['production-breaking'],
      false,
      "FAILED: 1 endpoint(s) breaking for production's clients",
    ],
    [
      "a breaking change production's consumers used, named by label or pseudonym",
      summary({ diffs: [diff(true)], breaking: true, consumers: usedBy(['mobile app 5.x', null]) }),
      ['breaking-with-consumers'],
      false,
      'FAILED: 2 production consumer(s) used a broken part in the last 30 days: mobile app 5.x, 00000000000000a1',
    ],
    [
      "a breaking change production's consumers used, in the report",
      summary({ diffs: [diff(true)], breaking: true, consumers: usedBy(['mobile app 5.x']) }),
      ['breaking-with-consumers'],
      false,
      '    GET /users 200: mobile app 5.x (4 call(s), 40%, last 2026-11-27T10:00:00.000Z) (10 call(s) counted)',
    ],
    [
      "a breaking change one production build's consumers used, naming the build",
      summary({ diffs: [diff(true)], breaking: true, consumers: { ...usedBy(['mobile app 5.x']), build: 'p-2' } }),
      ['breaking-with-consumers'],
      false,
      '  Production consumers of build p-2 of the broken parts (last 30 days):\n    GET /users 200: mobile app 5.x',
    ],
    [
      "a breaking change one production build's consumers used, in the reason",
      summary({ diffs: [diff(true)], breaking: true, consumers: { ...usedBy(['mobile app 5.x']), build: 'p-2' } }),
      ['breaking-with-consumers'],
      false,
      'FAILED: 1 production consumer(s) of build p-2 used a broken part in the last 30 days: mobile app 5.x',
    ],
    [
      'a breaking change no consumer used',
      summary({ diffs: [diff(true)], breaking: true, consumers: usedBy([]) }),
      ['breaking-with-consumers'],
      true,
      '    GET /users 200: no consumer (10 call(s) counted)\nPASSED',
    ],
    [
      'a summary from a backend without the comparison',
      summary({ againstProduction: undefined }),
      ['production-breaking'],
      true,
      'PASSED',
    ],
  ] as const)('%s', (_name, input, failOn, passed, text) => {
    const verdict = judgeCiSummary(input, failOn);
    expect(verdict.passed).toBe(passed);
    expect(verdict.text).toContain(text);
  });
});

/** Counts of `n` requests taking `ms` each, `errors` of them 5xx. */
const counts = (n: number, ms: number, errors = 0) => {
  const histogram = new LatencyHistogram();
  for (let i = 0; i < n; i++) histogram.record(ms + (i % 10) / 10);
  return { requests: n, serverErrors: errors, ttfb: histogram.toWire(), ttlb: histogram.toWire() };
};
const runtimeAnswer = (endpoints: CiRuntimeResponse['endpoints']): CiRuntimeResponse => ({
  pullRequest: '12',
  commit: 'abc',
  since: '2026-11-28T10:00:00.000Z',
  productionSince: '2026-11-21T10:00:00.000Z',
  endpoints,
});
const endpoint = (
  path: string,
  pullRequest: ReturnType<typeof counts>,
  production: ReturnType<typeof counts> | null,
) => ({
  endpointId: path,
  method: 'GET',
  path,
  version: '1.0',
  pullRequest,
  production,
});

describe('judgeRuntime', () => {
  const runtime = judgeRuntime(
    runtimeAnswer([
      endpoint('/slow', counts(50, 60), counts(500, 10)),
      endpoint('/errors', counts(50, 10, 10), counts(500, 10, 1)),
      endpoint('/same', counts(50, 10), counts(500, 10)),
      endpoint('/new', counts(50, 10), null),
      endpoint('/rare', counts(5, 60), counts(500, 10)),
    ]),
    DEFAULT_REGRESSION_THRESHOLDS,
  );

  it('fails on the runtime items only when --fail-on names them, with the figures in the text', () => {
    const both = judgeCiSummary(summary(), ['latency-regression', 'error-rate'], runtime);
    expect(both.passed).toBe(false);
    expect(both.reasons).toEqual([
      '1 endpoint(s) slower than production (p95)',
      '1 endpoint(s) with a higher error rate than production',
    ]);
    expect(both.text).toContain('Runtime against production, same endpoint and version (5):');
    expect(both.text).toContain(
      [
        '    GET /slow  1.0  p95 58.5 ms vs 10.3 ms, errors 0.0% vs 0.0% (50 vs 500 requests)',
        "      - latency REGRESSED: 50 of 50 above 19.0 ms (production's p95 at most 11.3 ms), p = 8.9e-66 ≤ 8.3e-4",
        '      - error rate ok: 0.0% against at most 2.4% allowed, p = 1.0 > 8.3e-4',
        '    GET /errors  1.0  p95 10.3 ms vs 10.3 ms, errors 20.0% vs 0.2% (50 vs 500 requests)',
        "      - latency ok: 0 of 50 above 19.0 ms (production's p95 at most 11.3 ms), p = 1.0 > 8.3e-4",
        '      - error rate REGRESSED: 20.0% against at most 2.9% allowed, p = 1.4e-6 ≤ 8.3e-4',
      ].join('\n'),
    );
    expect(both.text).toContain('GET /new  1.0  50 request(s); not judged: production has no requests at 1.0');
    expect(both.text).toContain('- latency not judged: 5 timed request(s) in this pull request, at least 30 needed');
    expect(judgeCiSummary(summary(), ['latency-regression'], runtime).reasons).toEqual([
      '1 endpoint(s) slower than production (p95)',
    ]);
    expect(judgeCiSummary(summary(), ['undocumented'], runtime).passed).toBe(true);
  });

  it('tables the figures in the Markdown report', () => {
    const report = markdownReport(
      summary(),
      ['latency-regression'],
      { backend: 'https://s.example.com', project: 'p' },
      runtime,
    );
    expect(report).toContain('**Failed:** 1 endpoint(s) slower than production (p95).');
    expect(report).toContain(
      '| Endpoint | Version | Requests (this / production) | p95 (this / production) | Error rate (this / production) | Latency | Errors |',
    );
    expect(report).toMatch(
      /\| `GET \/slow` \| 1\.0 \| 50 \/ 500 \| [\d.]+ ms \/ [\d.]+ ms \| 0\.0% \/ 0\.0% \| \*\*regressed\*\*: 50 of 50 above/,
    );
    expect(report).toContain(
      '| `GET /new` | 1.0 | 50 / 0 |  |  | not judged: not in production | not judged: not in production |',
    );
  });
});

describe('markdownReport', () => {
  const links = { backend: 'https://spectator.example.com', project: 'my api' };

  it('tables undocumented endpoints and diffs with their changes, says why it fails, and links the newest capture', () => {
    const report = markdownReport(
      summary({
        captures: ['c2', 'c1'],
        undocumented: [{ method: 'POST', path: '/a|b', interactions: 2, count: 4 }],
        diffs: [diff(true), diff(false)],
        breaking: true,
        againstProduction: productionMoves,
      }),
      ['undocumented', 'breaking'],
      links,
    );
    expect(report.split('\n')).toEqual([
      '### Spectator API check for pull request #12: failed',
      '',
      'Commit `abc` · 2 capture(s) · fails on undocumented, breaking',
      '',
      '**Failed:** 1 undocumented endpoint(s), 1 breaking diff(s).',
      '',
      '#### Undocumented endpoints (1)',
      '',
      '| Endpoint | Interactions |',
      '| --- | ---: |',
      '| `POST /a\\|b` | 2 |',
      '',
      '#### Diffs against the documentation (2)',
      '',
      '| Endpoint | Documented | Breaking | Changes |',
      '| --- | --- | --- | --- |',
      '| `GET /users` | 1.0 | **yes** | `removed response 200 $.name (breaking)` |',
      '| `GET /users` | 1.0 | no | `added response 200 $.name` |',
      '',
      '#### Against production (2)',
      '',
      '| Endpoint | Production → this pull request | Breaking | Changes |',
      '| --- | --- | --- | --- |',
      '| `GET /users` | 1.1 → 2.0 | **yes** | `removed response 200 $.name (breaking)` |',
      '| `GET /orders` | N/A → 1.0 (not in production yet) | no |  |',
      '',
      '[Review in Spectator](https://spectator.example.com/#/p/my%20api/captures/c2)',
      '',
    ]);
  });

  it('names the production build whose consumers it judged', () => {
    const radius = { ...usedBy(['mobile app 5.x']), build: 'p|2' };
    const report = markdownReport(
      summary({ diffs: [diff(true)], breaking: true, consumers: radius }),
      ['breaking-with-consumers'],
      links,
    );
    expect(report).toContain(
      '**Failed:** 1 production consumer(s) of build p|2 used a broken part in the last 30 days',
    );
    expect(report).toContain(
      '#### Production consumers of build p|2 of the broken parts (last 30 days)\n\n| Part | Consumers | Calls counted |',
    );
    expect(markdownReport(summary({ consumers: usedBy([]) }), ['breaking'], links)).toContain(
      '#### Production consumers of the broken parts (last 30 days)',
    );
  });

  it('names where each diff was first seen when the backend says, in the text and a column of its own', () => {
    const answer = summary({
      diffs: [
        { ...diff(true), since: 'since PR #9 (abc1234), staging build s|1', origins: [] },
        { ...diff(false), path: '/old', since: '', origins: [] },
      ],
      breaking: true,
    });
    expect(markdownReport(answer, ['breaking'], links).split('\n')).toEqual(
      expect.arrayContaining([
        '| Endpoint | Documented | Breaking | Changes | First seen |',
        '| --- | --- | --- | --- | --- |',
        '| `GET /users` | 1.0 | **yes** | `removed response 200 $.name (breaking)` | since PR #9 (abc1234), staging build s\\|1 |',
        '| `GET /old` | 1.0 | no | `added response 200 $.name` | – |',
      ]),
    );
    expect(judgeCiSummary(answer, ['breaking']).text).toContain(
      '    GET /users  documented 1.0  BREAKING\n      since PR #9 (abc1234), staging build s|1\n      - removed',
    );
  });

  it('says so when everything matches', () => {
    expect(markdownReport(summary(), ['undocumented', 'breaking'], links)).toContain(
      'passed\n\nCommit `abc` · 1 capture(s) · fails on undocumented, breaking\n\nEvery observed endpoint is documented and matches its documentation.',
    );
  });
});

describe('runCheck', () => {
  it('prints the text report, writes the Markdown one to --markdown and the GitHub job summary, and exits 1 when the gate fails', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'spectator-check-'));
    const answer = summary({ diffs: [diff(true)], breaking: true });
    const server = createServer((request, response) => {
      expect(request.url).toBe('/api/v1/projects/demo/ci/12?days=30');
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const stepSummary = path.join(dir, 'step-summary.md');
      await writeFile(stepSummary, 'earlier step\n');
      let output = '';
      const sink = { write: (text: string) => (output += text) };
      const markdown = path.join(dir, 'comment.md');
      expect(
        await runCheck(
          ['--backend', url, ...base.slice(2), '--markdown', markdown],
          { GITHUB_STEP_SUMMARY: stepSummary },
          sink,
          sink,
        ),
      ).toBe(CHECK_EXIT.failed);
      expect(output).toBe(judgeCiSummary(answer, ['undocumented', 'breaking']).text);
      const expected = markdownReport(answer, ['undocumented', 'breaking'], { backend: url, project: 'demo' });
      expect(await readFile(markdown, 'utf8')).toBe(expected);
      expect(await readFile(stepSummary, 'utf8')).toBe(`earlier step\n${expected}`);

      output = '';
      expect(
        await runCheck(
          ['--backend', url, ...base.slice(2), '--markdown', path.join(dir, 'missing', 'x.md')],
          {},
          sink,
          sink,
        ),
      ).toBe(CHECK_EXIT.error);
      expect(output).toContain('cannot write the Markdown report');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('asks for the consumers of one production build with --consumers-build, and exits 2 when the backend ignores it', async () => {
    const asked: string[] = [];
    let answer = summary({ diffs: [diff(true)], breaking: true, consumers: { ...usedBy(['web']), build: 'p 2' } });
    const server = createServer((request, response) => {
      asked.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      let output = '';
      const sink = { write: (text: string) => (output += text) };
      const args = [
        '--backend',
        `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        ...base.slice(2),
        '--fail-on',
        'breaking-with-consumers',
      ];
      expect(await runCheck(args, { SPECTATOR_CONSUMERS_BUILD: 'p 2' }, sink, sink)).toBe(CHECK_EXIT.failed);
      expect(asked).toEqual(['/api/v1/projects/demo/ci/12?days=30&build=p%202']);
      expect(output).toContain('FAILED: 1 production consumer(s) of build p 2 used a broken part');
      // A backend older than the option answers for every build: the check must not pass that off as the build's.
      answer = summary({ diffs: [diff(true)], breaking: true, consumers: usedBy([]) });
      output = '';
      expect(await runCheck(args, { SPECTATOR_CONSUMERS_BUILD: 'p 2' }, sink, sink)).toBe(CHECK_EXIT.error);
      expect(output).toBe(
        'spectator-agent check: the backend did not judge consumers of build p 2 (it is older than this agent): cannot use --consumers-build\n',
      );
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('exits 2 with the reason when the backend refuses or cannot be reached', async () => {
    const server = createServer((_request, response) => {
      response.writeHead(404, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          statusCode: 404,
          error: 'Not Found',
          message: 'pull request 12 has no CI capture in project demo',
        }),
      );
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

  it('asks again after a 503 (the evidence still being folded), as many times as CHECK_ATTEMPTS, then exits 2', async () => {
    const answers: Array<() => [number, Record<string, string>, string]> = [];
    let asked = 0;
    const server = createServer((_request, response) => {
      asked += 1;
      // The last answer is given again to every later request.
      const next = (answers.length > 1 ? answers.shift() : answers[0]) ?? (() => [500, {}, 'no answer set']);
      const [status, headers, message] = next();
      response
        .writeHead(status, { 'content-type': 'application/json', ...headers })
        .end(JSON.stringify({ statusCode: status, error: 'x', message }));
    });
    server.on('error', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      let output = '';
      const sink = { write: (text: string) => (output += text) };
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const folding = (): [number, Record<string, string>, string] => [
        503,
        { 'retry-after': '0' },
        "this environment's evidence is still being folded; ask again",
      ];
      // A 503 then a refusal: asked twice, the refusal's reason given.
      answers.push(folding, () => [404, {}, 'pull request 12 has no CI capture in project demo']);
      expect(await runCheck(['--backend', url, ...base.slice(2)], {}, sink, sink)).toBe(CHECK_EXIT.error);
      expect(asked).toBe(2);
      expect(output).toContain('the backend answered 503: this environment');
      expect(output).toContain('asking again in 0 s');
      expect(output).toContain('the backend answered 404: pull request 12 has no CI capture in project demo');
      // Always 503: asked CHECK_ATTEMPTS times, then the check could not run.
      asked = 0;
      output = '';
      answers.splice(0, answers.length, folding);
      expect(await runCheck(['--backend', url, ...base.slice(2)], {}, sink, sink)).toBe(CHECK_EXIT.error);
      expect(asked).toBe(CHECK_ATTEMPTS);
      expect(output.match(/asking again/g)).toHaveLength(CHECK_ATTEMPTS - 1);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
