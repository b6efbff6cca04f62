import { countInstances, fingerprint, inferShape, type Shape, withoutInstances } from '@spectator/shared';
import { extendEndpointShapes, mergeObservedEndpointShapes, NOTHING_DOCUMENTED } from '../versions/endpoint-shapes';
import { rowConforms } from './conformance';
import { type ObservationRow, observedEndpointShapes } from './observed-shapes';

const withTitle = inferShape({ title: 't' });
const withTitleAndAuthor = inferShape({ title: 't', author: 'a' });
const created = inferShape({ id: 1 });
const shapes = new Map<string, Shape>([withTitle, withTitleAndAuthor, created].map((s) => [fingerprint(s), s]));

function row(overrides: Partial<ObservationRow>): ObservationRow {
  return {
    method: 'POST',
    path: '/posts',
    status: 201,
    requestContentType: 'application/json',
    requestShape: fingerprint(withTitleAndAuthor),
    responseContentType: 'application/json',
    responseShape: fingerprint(created),
    count: 1,
    ...overrides,
  };
}

describe('observedEndpointShapes', () => {
  it('merges request shapes (a field missing somewhere becomes optional) and groups responses by status', () => {
    const observed = observedEndpointShapes(
      [
        row({ count: 3 }),
        row({ requestShape: fingerprint(withTitle) }),
        row({ status: 400, responseShape: null, responseContentType: 'text/plain' }),
      ],
      shapes,
    );
    expect(observed.request?.contentType).toBe('application/json');
    // Objects count the exchanges that had them (three and one), for the required claim.
    expect(observed.request?.shape).toEqual({
      kind: 'object',
      fields: [
        { name: 'author', required: false, shape: { kind: 'string' } },
        { name: 'title', required: true, shape: { kind: 'string' } },
      ],
      instances: 4,
    });
    expect(observed.responses).toEqual([
      { status: 201, contentType: 'application/json', shape: { ...created, instances: 4 } },
      { status: 400, contentType: 'text/plain', shape: null },
    ]);
  });

  it('counts the objects of every exchange of a row, records of lists one by one', () => {
    const list = inferShape([{ id: 1 }, { id: 2 }]);
    // Stored without its counts, as agents send it: the row carries them beside the fingerprint.
    const lists = new Map([...shapes, [fingerprint(list), withoutInstances(list)]]);
    const listRow = (count: number, responseInstances: string | null): ObservationRow =>
      row({
        method: 'GET',
        requestContentType: null,
        requestShape: null,
        status: 200,
        responseShape: fingerprint(list),
        count,
        responseInstances,
      });
    expect(observedEndpointShapes([listRow(1, '1')], lists).responses[0]?.shape).toEqual(list);
    // Without extras (read from evidence, or from agents before them) each exchange counts one record.
    expect(observedEndpointShapes([listRow(1, null)], lists).responses[0]?.shape).toEqual(withoutInstances(list));
    // Rows of one fingerprint add up: 1 + 2 exchanges, 1 + 1 records beyond one: five records.
    const added = observedEndpointShapes([listRow(1, '1'), listRow(2, '1')], lists).responses[0]?.shape;
    expect(added).toEqual(countInstances(list, 5));
    // 3 + 3 exchanges, 5 + 5 records beyond one: sixteen records, counted to six.
    const many = observedEndpointShapes([listRow(3, '5'), listRow(3, '5')], lists).responses[0]?.shape;
    expect(many).toEqual(countInstances(list, 6));
    const twice = observedEndpointShapes(
      [row({ requestShape: fingerprint(withTitle), count: 2 }), row({ requestShape: fingerprint(withTitle) })],
      shapes,
    );
    expect(twice.request?.shape).toEqual({ ...withTitle, instances: 3 });
    // Exchanges counted without a shape (sampled out) were objects at the top too.
    const sampledOut = observedEndpointShapes(
      [row({ requestShape: fingerprint(withTitle) }), row({ requestShape: null, count: 2 })],
      shapes,
    );
    expect(sampledOut.request?.shape).toEqual({ ...withTitle, instances: 3 });
  });

  it('has no request when no request carried a body', () => {
    expect(observedEndpointShapes([row({ requestContentType: null, requestShape: null })], shapes).request).toBeNull();
  });
});

describe('rowConforms', () => {
  const documented = observedEndpointShapes([row({})], shapes);

  it.each([
    ['the documented exchange', row({}), true],
    ['a request missing a required field', row({ requestShape: fingerprint(withTitle) }), false],
    ['an undocumented status', row({ status: 500 }), false],
    ['another response content type', row({ responseContentType: 'text/html', responseShape: null }), false],
    ['a body too large to shape', row({ requestShape: null }), true],
  ])('%s → %s', (_name, observed, expected) => {
    expect(rowConforms(documented, observed, shapes)).toBe(expected);
  });
});

describe('parameters of observation rows', () => {
  const named = (query: string[], requestHeaders: string[], overrides: Partial<ObservationRow> = {}): ObservationRow =>
    row({ query, requestHeaders, ...overrides });

  it('observes the names of every row, required where every row has them, without standard headers', () => {
    expect(
      observedEndpointShapes([named(['limit', 'q'], ['user-agent', 'x-tenant']), named(['q'], ['x-tenant'])], shapes)
        .parameters,
    ).toEqual({
      query: [
        { name: 'limit', required: false },
        { name: 'q', required: true },
      ],
      headers: [{ name: 'x-tenant', required: true }],
    });
    expect(observedEndpointShapes([row({})], shapes).parameters).toBeUndefined();
  });

  const documented = {
    ...observedEndpointShapes([row({})], shapes),
    parameters: { query: [{ name: 'q', required: true }], headers: [{ name: 'x-tenant', required: false }] },
  };

  it.each([
    ['the documented names', named(['q'], ['x-tenant', 'accept']), true],
    ['an optional header left out', named(['q'], []), true],
    ['an undocumented query parameter', named(['page', 'q'], []), false],
    ['an undocumented header', named(['q'], ['x-region']), false],
    ['a required query parameter missing', named([], ['x-tenant']), false],
    ['a row read without names (not compared)', row({}), true],
  ])('%s → %s', (_name, observed, expected) => {
    expect(rowConforms(documented, observed, shapes)).toBe(expected);
  });

  it('compares no names with a version that does not document parameters', () => {
    expect(rowConforms(observedEndpointShapes([row({})], shapes), named(['page'], ['x-region']), shapes)).toBe(true);
  });
});

describe('documenting observed shapes (extendEndpointShapes)', () => {
  const author = (shape: Shape | null | undefined): boolean | undefined =>
    shape?.kind === 'object' ? shape.fields.find((field) => field.name === 'author')?.required : undefined;
  const title = (shape: Shape | null | undefined): boolean | undefined =>
    shape?.kind === 'object' ? shape.fields.find((field) => field.name === 'title')?.required : undefined;

  it('claims required from presence while the body never varied, however few exchanges', () => {
    const documented = extendEndpointShapes(NOTHING_DOCUMENTED, observedEndpointShapes([row({})], shapes));
    expect(documented.request?.shape).toEqual(withTitleAndAuthor);
  });

  it('claims a field of a varying body required only once six objects all had it', () => {
    const few = observedEndpointShapes([row({ count: 2 }), row({ requestShape: fingerprint(withTitle) })], shapes);
    const fresh = extendEndpointShapes(NOTHING_DOCUMENTED, few);
    expect([title(fresh.request?.shape), author(fresh.request?.shape)]).toEqual([false, false]);
    expect(JSON.stringify(fresh)).not.toContain('instances');
    // Five objects with `title` (four before session 22) are not enough; six are.
    const five = observedEndpointShapes([row({ count: 4 }), row({ requestShape: fingerprint(withTitle) })], shapes);
    const notYet = extendEndpointShapes(NOTHING_DOCUMENTED, five);
    expect([title(notYet.request?.shape), author(notYet.request?.shape)]).toEqual([false, false]);
    const more = observedEndpointShapes([row({ count: 5 }), row({ requestShape: fingerprint(withTitle) })], shapes);
    const claimed = extendEndpointShapes(NOTHING_DOCUMENTED, more);
    expect([title(claimed.request?.shape), author(claimed.request?.shape)]).toEqual([true, false]);
    // Documented already: few objects are no evidence of absence, what was required stays so.
    const kept = extendEndpointShapes(claimed, few);
    expect([title(kept.request?.shape), author(kept.request?.shape)]).toEqual([true, false]);
  });

  it('claims no field of one error answer required, the fields of two error answers or one success answer', () => {
    const answer = (status: number, count: number): Shape | null | undefined =>
      extendEndpointShapes(NOTHING_DOCUMENTED, observedEndpointShapes([row({ status, count })], shapes)).responses[0]
        ?.shape;
    const requiredOf = (shape: Shape | null | undefined): boolean[] =>
      shape?.kind === 'object' ? shape.fields.map((field) => field.required) : [];
    expect(requiredOf(answer(404, 1)).some(Boolean)).toBe(false);
    expect(requiredOf(answer(503, 1)).some(Boolean)).toBe(false);
    expect(requiredOf(answer(404, 2)).every(Boolean)).toBe(true);
    expect(requiredOf(answer(201, 1)).every(Boolean)).toBe(true);
    expect(requiredOf(answer(404, 1)).length).toBeGreaterThan(0);
  });

  it('adds up the counts of literal copies regrouped before they are documented', () => {
    const few = observedEndpointShapes([row({ count: 2 }), row({ requestShape: fingerprint(withTitle) })], shapes);
    const regrouped = mergeObservedEndpointShapes(few, observedEndpointShapes([row({ count: 3 })], shapes));
    const documented = extendEndpointShapes(NOTHING_DOCUMENTED, regrouped);
    expect([title(documented.request?.shape), author(documented.request?.shape)]).toEqual([true, false]);
  });
});
