// Saved traffic through the agent's observation pipeline (`--replay`): its hold on the saved times,
// the rows it sends, and the backend's regroup of what it says it learned.
import { pathDigest, sameRoute } from '../../../shared/src/index';
import { ObservationPipeline } from '../../../agent/src/observe/pipeline';
import { Metrics } from '../../../agent/src/metrics';
import { replayAgent } from '../lib/replay';
import { CostMeter, addCost, emptyCost, formatCost } from '../lib/cost';
import { parseArgs } from '../run';
import type { Exchange } from '../lib/send';

let at = Date.parse('2026-11-28T00:00:00.000Z');
const exchange = (method: string, path: string, status: number, answer: unknown, body?: object): Exchange => ({
  request: {
    operation: 0,
    method,
    path,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    prefer: undefined,
  },
  url: `http://mock${path}`,
  startedAt: new Date((at += 500)).toISOString(),
  ms: 1,
  status,
  responseHeaders: { 'content-type': 'application/json', 'content-length': String(JSON.stringify(answer).length) },
  responseText: typeof answer === 'string' ? answer : JSON.stringify(answer),
});

const agent = { ObservationPipeline, Metrics, pathDigest, sameRoute };

const user = { login: 'x', id: 1, name: 'n' };
const sent = { messageid: 'm', credits: 1 };
const traffic = (): Exchange[] => [
  exchange('GET', '/users/alice?fields=login', 200, user),
  exchange('GET', '/users/nobody', 404, { message: 'Not Found' }),
  // After alice's hold: sent literal, then regrouped into /users/{user} once bob teaches it.
  ...Array.from({ length: 8 }, () => exchange('GET', '/health', 200, { ok: true })),
  exchange('GET', '/users/bob', 200, user),
  exchange('DELETE', '/users/carol', 204, ''),
  exchange('POST', '/message/send', 201, sent, { content: 'c', to: 't' }),
  exchange('POST', '/message/flash', 201, sent, { content: 'c', to: 't' }),
  exchange('GET', '/posts/17', 0, ''),
  exchange(
    'GET',
    '/orders/17',
    502,
    '{"statusCode":502,"error":"Bad Gateway","message":"upstream gave an invalid response"}',
  ),
];

describe('replayAgent', () => {
  it('gives the operations the agent sends, one per method and template, regrouped as the backend does', () => {
    const doc = replayAgent(traffic(), agent);
    expect(Object.keys(doc.paths).sort()).toEqual(['/health', '/message/flash', '/message/send', '/users/{user}']);
    expect(Object.keys(doc.paths['/users/{user}'] ?? {}).sort()).toEqual(['delete', 'get']);
  });
});

describe('--replay --cost', () => {
  it('takes --cost with --replay only', () => {
    expect(parseArgs(['--set', 'heldout20', '--replay', '/tmp/run', '--cost'])).toMatchObject({
      set: 'heldout20',
      replay: '/tmp/run',
      cost: true,
    });
    expect(parseArgs(['--replay=/tmp/run']).cost).toBe(false);
    expect(() => parseArgs(['--set', 'heldout20', '--cost'])).toThrow('--cost measures the learner on a replay');
  });

  it("counts the learner's work, the same on every replay, by what started it, and says it in two lines", () => {
    const meters = [new CostMeter(), new CostMeter()];
    const docs = meters.map((meter) => replayAgent(traffic(), agent, meter));
    // Metered, the replay sends what it sends unmetered.
    expect(docs[0]).toEqual(replayAgent(traffic(), agent));
    const [one, two] = meters.map((meter) => meter.cost);
    expect(one!.work).toBeGreaterThan(0);
    expect(one!.steps).toBeGreaterThan(0);
    expect(one!.stepped.observe).toBeGreaterThan(0);
    const { query, observe, identifiers } = one!.stepped;
    expect(query + observe + identifiers).toBeLessThanOrEqual(one!.work);
    expect(one!.longestWork).toBeLessThanOrEqual(observe + query + identifiers);
    expect(one!.replayMicros).toBeGreaterThanOrEqual(one!.stepMicros);
    // Work is counted, not timed: a second replay does the same, step for step.
    expect({ ...two!.stepped, work: two!.work, steps: two!.steps, longest: two!.longestWork }).toEqual({
      ...one!.stepped,
      work: one!.work,
      steps: one!.steps,
      longest: one!.longestWork,
    });
    const set = addCost(addCost(emptyCost(), one!), two!);
    expect(set.work).toBe(2 * one!.work);
    expect(set.steps).toBe(2 * one!.steps);
    const lines = formatCost('[train] 2 documents', set);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^\[train\] 2 documents cost: learner work [\d,]+ \(steps: observe [\d,]+, query [\d,]+, identifiers [\d,]+; outside steps [\d,]+\), [\d,]+ steps, most work in one [\d,]+$/,
    );
    expect(lines[0]).toContain(`learner work ${set.work.toLocaleString('en-US')} `);
    expect(lines[1]).toMatch(
      /^\[train\] 2 documents cost cpu: replay \d+\.\d\d s, learner steps \d+\.\d\d s, longest step \d+\.\d ms \(work [\d,]+\)$/,
    );
  });
});
