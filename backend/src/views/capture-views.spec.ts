import { randomUUID } from 'node:crypto';
import { MAX_MATCHED_PATH_LENGTH, MAX_RULES_PROGRAM_SIZE, parseIgnoreRules } from '@spectator/shared';
import { RE2JS } from 're2js';
import { MAX_RULES_WORK_PER_CAPTURE, visibilityOf } from './capture-views';

/** RE2 steps of the engine runs a spy saw: each run costs its program size per input character. */
function workOf(matches: jest.SpyInstance): number {
  return matches.mock.calls.reduce(
    (sum: number, [input]: unknown[], call: number) =>
      sum + (matches.mock.contexts[call] as RE2JS).programSize() * String(input).length,
    0,
  );
}

// Issue 15 (third review): a view tested a capture's rules on each of its templates, memoized only
// within one computation: a hostile list (2,500 instructions) on 20,000 templates of 2,048
// characters, about 165 ms each, was about 55 min of the event loop for one view, and as much again
// for the next.
describe('visibility of a capture’s templates under its rules', () => {
  let matches: jest.SpyInstance;
  beforeEach(() => {
    matches = jest.spyOn(RE2JS.prototype, 'matches');
  });
  afterEach(() => matches.mockRestore());

  it('tests a rules list within MAX_RULES_WORK_PER_CAPTURE on a capture, over all its views', () => {
    // A list at the limit: 6 rules of about 400 instructions and ordinary ones after them.
    const rules = [
      ...Array.from({ length: 6 }, (_, i) => `GET /x(.{0,100}.{0,100}${i})`),
      'GET /assets/**',
      'OPTIONS (.*)',
    ];
    const listSize = 6 * 404 + 13;
    expect(parseIgnoreRules(rules).errors).toEqual([]);
    expect(listSize).toBeLessThanOrEqual(MAX_RULES_PROGRAM_SIZE);
    const capture = { id: randomUUID(), rules };
    const templates = [
      { method: 'GET', path: '/assets/app.js' },
      ...Array.from({ length: 20_000 }, (_, i) => ({
        method: 'GET',
        path: `/b${i}/`.padEnd(MAX_MATCHED_PATH_LENGTH, 'c'),
      })),
    ];
    // Unbounded, one view would be this much work: hundreds of times the budget.
    expect(templates.length * listSize * MAX_MATCHED_PATH_LENGTH).toBeGreaterThan(500 * MAX_RULES_WORK_PER_CAPTURE);

    const first = visibilityOf(capture);
    const shownFirst = templates.map(({ method, path }) => first(method, path));
    const firstWork = workOf(matches);
    expect(firstWork).toBeGreaterThan(0);
    expect(firstWork).toBeLessThanOrEqual(MAX_RULES_WORK_PER_CAPTURE);
    // Tested while the budget lasts, as the rules say; the rest shown.
    expect(shownFirst[0]).toBe(false);
    expect(shownFirst.slice(1).every(Boolean)).toBe(true);
    for (const [input] of matches.mock.calls) expect(String(input).length).toBeLessThanOrEqual(MAX_MATCHED_PATH_LENGTH);

    // Later views of the same list (read again from the database: an equal list) add nothing past
    // the budget, and answer the same.
    for (let view = 0; view < 3; view++) {
      const again = visibilityOf({ id: capture.id, rules: [...rules] });
      expect(templates.map(({ method, path }) => again(method, path))).toEqual(shownFirst);
    }
    expect(workOf(matches)).toBeLessThanOrEqual(MAX_RULES_WORK_PER_CAPTURE);

    // A template of a method no rule applies to costs nothing.
    matches.mockClear();
    expect(visibilityOf(capture)('DELETE', templates[5]!.path)).toBe(true);
    expect(matches).not.toHaveBeenCalled();
  });

  it('decides every template of a large capture under an ordinary list, each once', () => {
    const capture = { id: randomUUID(), rules: ['GET /assets/**', 'OPTIONS (.*)', 'GET /health', 'GET /favicon.ico'] };
    const templates = Array.from({ length: 20_000 }, (_, i) => ({
      method: i % 7 === 0 ? 'OPTIONS' : 'GET',
      path: i % 10 === 0 ? `/assets/chunk-${i}.js` : `/api/v1/projects/{project}/resources-${i}/{resource}/items`,
    }));
    const expected = templates.map(({ method, path }) => !(method === 'OPTIONS' || path.startsWith('/assets/')));
    const visible = visibilityOf(capture);
    expect(templates.map(({ method, path }) => visible(method, path))).toEqual(expected);
    const calls = matches.mock.calls.length;
    expect(workOf(matches)).toBeLessThanOrEqual(MAX_RULES_WORK_PER_CAPTURE);

    const again = visibilityOf(capture);
    expect(templates.map(({ method, path }) => again(method, path))).toEqual(expected);
    expect(matches.mock.calls.length).toBe(calls);
  });

  it('decides again under a new rules list, with a budget of its own', () => {
    const id = randomUUID();
    expect(visibilityOf({ id, rules: ['GET /assets/**'] })('GET', '/assets/app.js')).toBe(false);
    expect(visibilityOf({ id, rules: ['GET /health'] })('GET', '/assets/app.js')).toBe(true);
    expect(visibilityOf({ id, rules: ['GET /health'] })('GET', '/health')).toBe(false);
    expect(visibilityOf({ id, rules: [] })('GET', '/health')).toBe(true);
  });
});
