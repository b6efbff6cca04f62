/**
 * Text array literals (captures/batch-statement.ts `textArrayLiteral`): the batch statement and the
 * folds pass their text columns as literals, not through pg's per-element encoding (issue 20). On
 * real PostgreSQL, any texts (quotes, backslashes, braces, commas, control characters, JSON texts,
 * NUL aside) and nulls read back as they were sent.
 */
import fc from 'fast-check';
import pg from 'pg';
import { textArrayLiteral } from '../src/captures/batch-statement';
import { createTestDatabase, type TestDatabase } from './support';

let database: TestDatabase;
let client: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});
afterAll(async () => {
  await client.end();
  await database.drop();
});

async function roundTrip(values: ReadonlyArray<string | null>): Promise<Array<string | null>> {
  const { rows } = await client.query<{ values: Array<string | null> }>('SELECT $1::text[] AS values', [
    textArrayLiteral(values),
  ]);
  return (rows[0] as { values: Array<string | null> }).values;
}

it('reads back JSON texts, quotes and backslashes as sent', async () => {
  const values = ['{"14":1,"17":2}', 'say "hi"', 'back\\slash', '\\"', '"', '\\', null, 'NULL', '', '{a,b}', 'ünï☃'];
  expect(await roundTrip(values)).toEqual(values);
  // Only quotes and backslashes escaped: JSON's own text, no loop over the elements.
  expect(textArrayLiteral(['{"a":1}', null])).toBe('{"{\\"a\\":1}",null}');
});

it('reads back control characters and escaped backslashes before letters as sent', async () => {
  // Each alone, beside a quote, so no other element decides how the array is written.
  for (const value of ['line\nbreak', 'tab\there', '\u0001', 'back\\nslash', '\\u0041', '\\"']) {
    expect(await roundTrip(['"', value, null])).toEqual(['"', value, null]);
  }
});

it('reads back any texts and nulls as sent', async () => {
  // NUL aside (PostgreSQL text cannot hold it; the wire validation refuses it).
  const text = fc.string({ unit: 'binary', maxLength: 20 }).filter((s) => !s.includes('\u0000'));
  const awkward = fc.constantFrom('"', '\\', '\\"', '\\\\n', '{', '}', ',', ' ', 'NULL', '\n', '\u001f', '{"k":"v"}');
  const element = fc.oneof(text, awkward, fc.constant(null));
  await fc.assert(
    fc.asyncProperty(fc.array(element, { maxLength: 12 }), async (values) => {
      expect(await roundTrip(values)).toEqual(values);
    }),
    { numRuns: 300 },
  );
});
