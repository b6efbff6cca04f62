import { countOfInterest, isFormMediaType, isJsonMediaType, isStreamMediaType } from '../src/interest';

describe('isJsonMediaType', () => {
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON;charset=UTF-8',
    '  application/json  ',
    'application/problem+json',
    'application/vnd.api+json; ext=bulk',
    'application/merge-patch+json',
  ])('%j is JSON', (contentType) => {
    expect(isJsonMediaType(contentType)).toBe(true);
  });

  it.each([
    null,
    undefined,
    '',
    'text/plain',
    'text/html; charset=utf-8',
    'application/jsonx',
    'application/json-seq',
    'text/json',
    'application/x-www-form-urlencoded',
    'application/+json',
    'json',
    'application/xml+jsonx',
  ])('%j is not JSON', (contentType) => {
    expect(isJsonMediaType(contentType)).toBe(false);
  });
});

describe('countOfInterest', () => {
  const json = { contentType: 'application/json' };
  const html = { contentType: 'text/html' };

  it.each([
    // seed-spec §2: two interactions with one request body and one response body each give 4
    ['two POST /posts with JSON bodies both ways', { request: json, response: json, count: 2 }, 4],
    ['a GET with a JSON response', { request: null, response: json, count: 1 }, 1],
    ['three GETs with JSON responses', { request: null, response: json, count: 3 }, 3],
    ['a JSON request answered with HTML', { request: json, response: html, count: 5 }, 5],
    ['no bodies at all', { request: null, response: null, count: 7 }, 0],
    ['bodies not shaped (HTML)', { request: html, response: html, count: 2 }, 0],
    // DESIGN.md counts JSON bodies only: forms and streams are shaped, but not counted.
    [
      'an upload answered with JSON',
      { request: { contentType: 'multipart/form-data; boundary=x' }, response: json, count: 2 },
      2,
    ],
    [
      'a GET answered with server-sent events',
      { request: null, response: { contentType: 'text/event-stream' }, count: 3 },
      0,
    ],
    ['zero interactions', { request: json, response: json, count: 0 }, 0],
  ])('%s → %i', (_name, observation, expected) => {
    expect(countOfInterest(observation)).toBe(expected);
  });

  it.each([-1, 1.5, Number.NaN])('rejects count %p', (count) => {
    expect(() => countOfInterest({ request: json, response: json, count })).toThrow(
      `count must be a non-negative integer, got ${count}`,
    );
  });
});

describe('isFormMediaType', () => {
  it.each([
    ['application/x-www-form-urlencoded', true],
    ['Multipart/Form-Data; boundary=----x', true],
    ['multipart/mixed; boundary=x', false],
    ['application/json', false],
    ['', false],
    [null, false],
  ])('%s → %s', (value, expected) => {
    expect(isFormMediaType(value)).toBe(expected);
  });
});

describe('isStreamMediaType', () => {
  it.each([
    ['text/event-stream', true],
    ['Text/Event-Stream; charset=utf-8', true],
    ['application/x-ndjson', true],
    ['application/jsonl', true],
    ['application/json-seq', true],
    ['application/json', false],
    ['text/plain', false],
    [undefined, false],
  ])('%s → %s', (value, expected) => {
    expect(isStreamMediaType(value)).toBe(expected);
  });
});
