import { inferShape } from '@spectator/shared';
import { boundaryOf, MAX_FORM_PARTS, multipartShape, urlencodedShape } from './form';

/** A multipart/form-data body as browsers and `fetch(FormData)` write it. */
function multipart(boundary: string, parts: { headers: string[]; content: string }[]): Buffer {
  const text =
    parts.map((part) => `--${boundary}\r\n${part.headers.join('\r\n')}\r\n\r\n${part.content}\r\n`).join('') +
    `--${boundary}--\r\n`;
  return Buffer.from(text, 'utf8');
}

describe('urlencodedShape', () => {
  it('is the shape of the same fields as JSON: strings with their format hint, a repeated name an array', () => {
    const shape = urlencodedShape(
      Buffer.from('user=ann&email=ann%40example.com&tag=a&tag=b&id=5f0c2a7e-9b1d-4c3e-8a6f-2d7b9e1c4a80'),
    );
    expect(shape).toEqual(
      inferShape({
        user: 'ann',
        email: 'ann@example.com',
        tag: ['a', 'b'],
        id: '5f0c2a7e-9b1d-4c3e-8a6f-2d7b9e1c4a80',
      }),
    );
    expect(shape.fields.find((f) => f.name === 'email')?.shape).toEqual({ kind: 'string', format: 'email' });
  });

  it(`reads at most ${MAX_FORM_PARTS} fields, and marks the shape of a longer form truncated`, () => {
    const fields = (count: number) => Buffer.from(Array.from({ length: count }, (_, i) => `f${i}=v`).join('&'));
    const long = urlencodedShape(fields(MAX_FORM_PARTS + 500));
    expect(long.truncated).toBe(true);
    expect(long.fields.length).toBe(256); // the shape limit on field names
    expect(urlencodedShape(Buffer.from(Array.from({ length: MAX_FORM_PARTS + 1 }, () => 'a=1').join('&')))).toEqual({
      kind: 'object',
      fields: [{ name: 'a', required: true, shape: { kind: 'array', items: { kind: 'string' } } }],
      truncated: true,
    });
    expect(
      urlencodedShape(Buffer.from(Array.from({ length: MAX_FORM_PARTS }, () => 'a=1').join('&'))).truncated,
    ).toBeUndefined();
  });

  it('gives an empty body no fields', () => {
    expect(urlencodedShape(Buffer.alloc(0))).toEqual({ kind: 'object', fields: [] });
  });
});

describe('multipartShape', () => {
  const boundary = '----WebKitFormBoundary7MA4YWxkTrZu0gW';

  it('names every part: text parts strings, a file part binary, a JSON part its shape, a repeated name an array', () => {
    const body = multipart(boundary, [
      { headers: ['Content-Disposition: form-data; name="title"'], content: 'Holiday' },
      {
        headers: ['Content-Disposition: form-data; name="avatar"; filename="me.png"', 'Content-Type: image/png'],
        content: '\x89PNG\r\n--not-a-delimiter',
      },
      {
        headers: ['content-disposition: form-data; name="meta"', 'content-type: application/json'],
        content: '{"width":3,"tags":["x"]}',
      },
      { headers: ['Content-Disposition: form-data; name="contact"'], content: 'ann@example.com' },
      { headers: ['Content-Disposition: form-data; name="files"; filename="a.txt"'], content: 'a' },
      { headers: ['Content-Disposition: form-data; name="files"; filename="b.txt"'], content: 'b' },
    ]);
    expect(multipartShape(body, boundary)).toEqual({
      kind: 'object',
      fields: [
        { name: 'avatar', required: true, shape: { kind: 'string', format: 'binary' } },
        { name: 'contact', required: true, shape: { kind: 'string', format: 'email' } },
        { name: 'files', required: true, shape: { kind: 'array', items: { kind: 'string', format: 'binary' } } },
        { name: 'meta', required: true, shape: inferShape({ width: 3, tags: ['x'] }) },
        { name: 'title', required: true, shape: { kind: 'string' } },
      ],
    });
  });

  it('takes a part declared JSON that does not parse for a string, and skips a part without a name', () => {
    const body = multipart(boundary, [
      { headers: ['Content-Disposition: form-data; name="meta"', 'Content-Type: application/json'], content: '{"cut' },
      { headers: ['Content-Disposition: form-data'], content: 'nameless' },
    ]);
    expect(multipartShape(body, boundary)).toEqual({
      kind: 'object',
      fields: [{ name: 'meta', required: true, shape: { kind: 'string' } }],
    });
  });

  it('reads a name with an escaped quote and a file named only by filename*', () => {
    const body = multipart(boundary, [
      {
        headers: [`Content-Disposition: form-data; name="say \\"hi\\""; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`],
        content: '%PDF',
      },
    ]);
    expect(multipartShape(body, boundary)?.fields).toEqual([
      { name: 'say "hi"', required: true, shape: { kind: 'string', format: 'binary' } },
    ]);
  });

  it(`reads at most ${MAX_FORM_PARTS} parts, and marks the shape of a longer body truncated`, () => {
    const parts = (count: number) =>
      multipart(
        boundary,
        Array.from({ length: count }, () => ({ headers: ['Content-Disposition: form-data; name="a"'], content: 'x' })),
      );
    expect(multipartShape(parts(MAX_FORM_PARTS + 1), boundary)).toEqual({
      kind: 'object',
      fields: [{ name: 'a', required: true, shape: { kind: 'array', items: { kind: 'string' } } }],
      truncated: true,
    });
    expect(multipartShape(parts(MAX_FORM_PARTS), boundary)?.truncated).toBeUndefined();
  });

  it('is null for another boundary, a body cut short, or a body with no named part', () => {
    const body = multipart(boundary, [{ headers: ['Content-Disposition: form-data; name="title"'], content: 'x' }]);
    expect(multipartShape(body, 'other')).toBeNull();
    expect(multipartShape(body, '')).toBeNull();
    expect(multipartShape(body.subarray(0, body.length - 20), boundary)).toBeNull();
    expect(multipartShape(Buffer.from(`--${boundary}--\r\n`), boundary)).toBeNull();
  });
});

describe('boundaryOf', () => {
  it.each([
    ['multipart/form-data; boundary=abc123', 'abc123'],
    ['multipart/form-data; charset=utf-8; BOUNDARY="a b;c"', 'a b;c'],
    ['multipart/form-data;boundary=----x', '----x'],
    ['multipart/form-data', ''],
  ])('reads %s', (value, boundary) => {
    expect(boundaryOf(value)).toBe(boundary);
  });
});
