import fc from 'fast-check';
import { parseIgnoreRules, queryNames, type IgnoreRule } from '@spectator/shared';
import { createRootLogger } from '../log';
import { Metrics } from '../metrics';
import { CapturePipeline } from './pipeline';

function pipeline(rules: IgnoreRule[] = []): CapturePipeline {
  return new CapturePipeline({ captureLimit: 1024, captureId: () => 'c1', rules: () => rules, metrics: new Metrics(), log: createRootLogger('silent') });
}

/** The query names the pipeline reports for one request to `target`. */
function reported(capture: CapturePipeline, target: string): readonly string[] {
  capture.record({ captureId: 'c1', method: 'GET', target, status: 200, requestHeaders: {}, responseHeaders: {}, request: null, response: null, at: 0, sampled: false });
  return capture.drain()[0]?.observations[0]?.query ?? [];
}

describe('CapturePipeline query names', () => {
  it('reports the names queryNames finds, for any query, through its cache of raw names', () => {
    const capture = pipeline();
    const queryText = fc.stringMatching(/^[a-zA-Z0-9&=#%+?/[\]_.-]{0,40}$/);
    fc.assert(
      fc.property(queryText, (query) => {
        expect(reported(capture, `/p?${query}`)).toEqual([...queryNames(`?${query}`)].sort());
      }),
      { numRuns: 2_000 },
    );
  });

  it.each([
    ['/search?page=3&sort=asc', ['page', 'sort']],
    ['/search?page=4&sort=desc', ['page', 'sort']],
    ['/search?q=a=b&&tag[0]=x&tag[1]=y#frag=1', ['q', 'tag[]']],
    ['/search?', []],
  ])('%s → %j (values never change the names)', (target, names) => {
    expect(reported(pipeline(), target)).toEqual(names);
  });
});

describe('CapturePipeline sampling', () => {
  const json = { 'content-type': 'application/json', 'content-length': '20' };

  it('spends no shape budget on ignored traffic: an ignored endpoint is never sampled, others still are', () => {
    const capture = pipeline(parseIgnoreRules(['GET POST /db']).rules);
    expect(capture.sample('GET', '/db?x=1', 200, json, 0)).toBe(false);
    expect(capture.sample('post', '/db', 201, json, 20)).toBe(false);
    expect(capture.sample('GET', '/posts', 200, json, 0)).toBe(true);
  });
});

describe('CapturePipeline taps', () => {
  it('gives a body it cannot classify a tap that only counts, and says so, instead of throwing on the hot path', () => {
    const lines: string[] = [];
    const capture = new CapturePipeline({ captureLimit: 1024, captureId: () => 'c1', rules: () => [], metrics: new Metrics(), log: createRootLogger('error', { write: (line: string) => lines.push(line) }) });
    // Not a header value node:http would give: the media type lookup throws on it.
    const tap = capture.tap({} as unknown as string, undefined, true);
    tap.write(Buffer.from('{"a":1}'));
    expect({ bytes: tap.bytes, copied: tap.copied, copying: tap.copying }).toEqual({ bytes: 7, copied: 0, copying: false });
    expect(lines.join('')).toContain('capture failed for one body');
  });
});
