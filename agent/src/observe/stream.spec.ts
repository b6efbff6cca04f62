import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { canonicalShape, fingerprint, inferShape, MAX_EXTRA_INSTANCES, type Shape } from '@spectator/shared';
import { BodyTap } from './exchange';
import { STREAM_PREFIX_BYTES, streamShape } from './stream';
import { summariseBody } from './summarise';

const SSE = 'text/event-stream';
const NDJSON = 'application/x-ndjson';

function shapeText(text: string, contentType: string, cut = false): string | null {
  const shape = streamShape(Buffer.from(text, 'utf8'), contentType, cut);
  return shape === null || shape === 'no-items' ? shape : canonicalShape(shape);
}

describe('streamShape: server-sent events', () => {
  it('is the array of the events’ data: JSON data as its shape, other data as a string', () => {
    const text =
      ': a comment\n\nevent: delta\nid: 7\ndata: {"text":"He","index":0}\n\ndata: {"text":"llo","index":1,"done":false}\n\ndata: [DONE]\n\n';
    expect(shapeText(text, SSE)).toBe(
      canonicalShape(inferShape([{ text: 'He', index: 0 }, { text: 'llo', index: 1, done: false }, '[DONE]'])),
    );
    expect(shapeText(text, SSE)).toBe('[(S|{"done"?:B,"index":N,"text":S})]');
  });

  it('joins data lines with a newline, takes CRLF, CR and LF line ends, and one space after the colon', () => {
    expect(shapeText('data: {"a":\r\ndata:1}\r\n\r\ndata:{"b":true}\r\r', SSE)).toBe('[{"a"?:N,"b"?:B}]');
  });

  it('leaves out events without data, and the last event when the stream stops before its blank line', () => {
    expect(shapeText('event: ping\n\ndata: {"a":1}\n\ndata: {"b":', SSE, true)).toBe('[{"a":N}]');
    expect(shapeText('data: {"a":1}\n\ndata: {"b":2}', SSE)).toBe('[{"a":N}]');
    expect(shapeText(': keep-alive\n\n', SSE)).toBe('[U]');
  });

  it('says so when the kept bytes of a cut stream hold no whole event (nothing seen), unlike a stream that ended without one', () => {
    expect(streamShape(Buffer.from('data: {"a":'), SSE, true)).toBe('no-items');
    expect(streamShape(Buffer.from('{"id":'), NDJSON, true)).toBe('no-items');
    expect(shapeText('', SSE)).toBe('[U]');
  });

  it('looks at the first 1,000 events only, so the shape does not depend on how long the stream ran', () => {
    const events = (count: number) => Array.from({ length: count }, (_, i) => `data: {"i":${i}}\n\n`).join('');
    expect(shapeText(events(1_000) + 'data: "late"\n\n', SSE)).toBe('[{"i":N}]');
  });

  it('keeps no value: not the data, not an event name, not an id', () => {
    const shape = streamShape(
      Buffer.from('event: canary-event\nid: canary-id\ndata: {"secret":"canary-value"}\n\ndata: canary-text\n\n'),
      SSE,
      false,
    ) as Shape;
    expect(JSON.stringify(shape)).not.toMatch(/canary/);
  });
});

describe('streamShape: JSON lines and JSON text sequences', () => {
  it('is the array of the lines’ shapes; blank lines and a missing last newline are fine', () => {
    expect(shapeText('{"id":1,"name":"a"}\n\n{"id":2}\r\n{"id":3,"name":null}', NDJSON)).toBe(
      '[{"id":N,"name"?:(S|Z)}]',
    );
  });

  it('leaves out the line the kept bytes cut off', () => {
    expect(shapeText('{"id":1}\n{"id":2,"na', NDJSON, true)).toBe('[{"id":N}]');
  });

  it('is null (unparsable) when a line is not JSON', () => {
    expect(shapeText('{"id":1}\nnot json\n', NDJSON)).toBeNull();
  });

  it('reads RFC 7464 sequences (each text after a record separator)', () => {
    expect(shapeText('\x1e{"a":1}\n\x1e{"a":2}\n', 'application/json-seq')).toBe('[{"a":N}]');
  });
});

describe('a stream prefix through summariseBody', () => {
  // 600 lines of 400 hex characters compress to about 125 KB: past the 64 KiB kept, so the kept
  // bytes end mid-stream and are decoded as far as they go.
  const lines =
    Array.from({ length: 600 }, (_, i) =>
      JSON.stringify({ id: i, name: crypto.randomBytes(200).toString('hex') }),
    ).join('\n') + '\n';

  it.each([
    ['gzip', zlib.gzipSync],
    ['deflate', zlib.deflateSync],
    ['deflate', zlib.deflateRawSync],
    ['br', zlib.brotliCompressSync],
  ] as const)('decodes a %s stream cut at 64 KiB and shapes its whole lines', (encoding, compress) => {
    const tap = new BodyTap({
      contentType: NDJSON,
      contentEncoding: encoding,
      limit: STREAM_PREFIX_BYTES,
      copy: true,
      prefix: true,
    });
    tap.write(compress(Buffer.from(lines)));
    expect(tap.cut).toBe(true);
    const summary = summariseBody(tap, true, 1024 * 1024);
    expect(summary.body).toEqual({ contentType: NDJSON, shape: fingerprint(inferShape([{ id: 0, name: '' }])) });
    // Beside the fingerprint: records beyond one, counted up to five more (hundreds of lines).
    expect(summary.instances).toBe(String(MAX_EXTRA_INSTANCES));
  });
});
