import { canonicalShape } from './canonical';
import { inferShape, shapeFingerprint } from './infer';
import {
  addInstanceExtras,
  addTopInstances,
  claimRequired,
  countInstances,
  instanceExtras,
  isInstanceExtras,
  REQUIRED_INSTANCES,
  withoutInstances,
} from './instances';
import { mergeCountedShapes, mergeShapes } from './merge';
import type { ObjectShape, Shape } from './types';

const records = (count: number, record: (i: number) => object = (i) => ({ id: i })): object[] =>
  Array.from({ length: count }, (_, i) => record(i));

/** The item shape of a shaped list. */
const itemsOf = (shape: Shape): ObjectShape => {
  if (shape.kind !== 'array' || shape.items.kind !== 'object') throw new Error(`not a list of records: ${shape.kind}`);
  return shape.items;
};

const requiredOf = (shape: Shape): Record<string, boolean> => {
  if (shape.kind !== 'object') throw new Error(`not an object: ${shape.kind}`);
  return Object.fromEntries(shape.fields.map((field) => [field.name, field.required]));
};

describe('instance counts', () => {
  it('counts the objects at each place of a body up to six, and says nothing for one', () => {
    expect(inferShape({ id: 1 })).toEqual({
      kind: 'object',
      fields: [{ name: 'id', required: true, shape: { kind: 'number' } }],
    });
    expect(itemsOf(inferShape(records(1))).instances).toBeUndefined();
    expect(itemsOf(inferShape(records(2))).instances).toBe(2);
    expect(itemsOf(inferShape(records(3))).instances).toBe(3);
    expect(itemsOf(inferShape(records(5))).instances).toBe(5);
    expect(itemsOf(inferShape(records(6))).instances).toBe(REQUIRED_INSTANCES);
    expect(itemsOf(inferShape(records(500))).instances).toBe(REQUIRED_INSTANCES);
    // Objects under an optional field count where they are: 1 of 3 items has an `owner`.
    const owners = itemsOf(inferShape(records(3, (i) => (i === 0 ? { owner: { name: 'x' } } : {}))));
    expect(owners.fields[0]!.shape).toEqual({ kind: 'object', fields: [expect.objectContaining({ name: 'name' })] });
  });

  it('leaves counts out of the canonical text and the fingerprint: they travel beside it as extras', () => {
    expect(canonicalShape(inferShape(records(3)))).toBe('[{"id":N}]');
    const prints = [1, 2, 3, 4, 6, 9].map((count) => shapeFingerprint(records(count)));
    expect(new Set(prints).size).toBe(1);
    // One digit per object place (canonical order), the objects beyond one, up to five; zeros at the end left out.
    const counts = { extras: 'stale' };
    const extrasOf = (value: unknown): string => (shapeFingerprint(value, {}, counts), counts.extras);
    expect([1, 2, 3, 4, 6, 9].map((count) => extrasOf(records(count)))).toEqual(['', '1', '2', '3', '5', '5']);
    expect(extrasOf({ id: 1 })).toBe('');
    // The body's object (place 0), `a`'s items (place 1), `b`'s items (place 2).
    expect(extrasOf({ b: [{}, {}, {}], a: [{ x: 1 }] })).toBe('002');
    expect(instanceExtras(inferShape({ b: [{}, {}, {}], a: [{ x: 1 }] }))).toBe('002');
    // A oneOf's object option comes before its array option (kind order).
    expect(extrasOf([[{ x: 1 }, { x: 2 }], { y: 1 }])).toBe('01');
  });

  it('adds extras digit by digit up to five, and checks their form', () => {
    expect(addInstanceExtras('', '02')).toBe('02');
    expect(addInstanceExtras('1', '')).toBe('1');
    expect(addInstanceExtras('12', '0201')).toBe('1401');
    expect(addInstanceExtras('3', '3')).toBe('5');
    expect(addInstanceExtras('5', '1')).toBe('5');
    expect(isInstanceExtras('', 4)).toBe(true);
    expect(isInstanceExtras('0301', 4)).toBe(true);
    expect(isInstanceExtras('03010', 8)).toBe(false);
    expect(isInstanceExtras('05', 8)).toBe(true);
    expect(isInstanceExtras('06', 8)).toBe(false);
    expect(isInstanceExtras('0301', 3)).toBe(false);
    expect(isInstanceExtras(3, 3)).toBe(false);
  });

  it('adds up in a counted merge, keeps the larger in a plain one (merge stays idempotent)', () => {
    const two = inferShape(records(2));
    const one = inferShape(records(1));
    expect(itemsOf(mergeCountedShapes(two, one)).instances).toBe(3);
    expect(itemsOf(mergeCountedShapes(two, two)).instances).toBe(4);
    expect(mergeShapes(two, two)).toEqual(two);
    expect(itemsOf(mergeShapes(two, one)).instances).toBe(2);
    expect(mergeCountedShapes({ kind: 'object', fields: [] }, { kind: 'object', fields: [] })).toEqual({
      kind: 'object',
      fields: [],
      instances: 2,
    });
  });

  it("counts a shape's objects from its exchanges and their extras, up to six", () => {
    const body = withoutInstances(inferShape({ id: 1, tags: [{ name: 'a' }, { name: 'b' }] }));
    const counted = countInstances(body, 3) as ObjectShape;
    expect(counted.instances).toBe(3);
    expect(itemsOf(counted.fields[1]!.shape).instances).toBe(3);
    // Three exchanges, one of them with two tags: four tags in all.
    expect(itemsOf((countInstances(body, 3, '01') as ObjectShape).fields[1]!.shape).instances).toBe(4);
    expect((countInstances(body, 1) as ObjectShape).instances).toBeUndefined();
    // Counts stored in the shape are not read: the exchanges and their extras are what counts.
    expect(countInstances(inferShape(records(3)), 1)).toEqual(inferShape(records(1)));
    expect((addTopInstances(counted, 2) as ObjectShape).instances).toBe(5);
    expect((addTopInstances(counted, 9) as ObjectShape).instances).toBe(REQUIRED_INSTANCES);
    expect(addTopInstances(inferShape([{ id: 1 }]), 2)).toEqual(inferShape([{ id: 1 }]));
    // Below the top: the objects every shaped exchange had through fields count the unshaped ones too,
    // an optional field's object and a list's items do not (how many items an unshaped body held, nobody knows).
    const nested = mergeCountedShapes(
      countInstances(
        inferShape({ person: { name: 'a', address: { city: 'c' } }, note: { a: 1 }, tags: [{ n: 1 }] }),
        3,
      ),
      countInstances(inferShape({ person: { name: 'b', address: { city: 'd' } }, tags: [{ n: 2 }] }), 2),
    );
    const added = addTopInstances(nested, 4) as ObjectShape;
    const field = (shape: Shape, name: string) => (shape as ObjectShape).fields.find((f) => f.name === name)!.shape;
    expect(added.instances).toBe(REQUIRED_INSTANCES);
    expect((field(added, 'person') as ObjectShape).instances).toBe(REQUIRED_INSTANCES);
    expect((field(field(added, 'person'), 'address') as ObjectShape).instances).toBe(REQUIRED_INSTANCES);
    expect((field(added, 'note') as ObjectShape).instances).toBe(3);
    expect(itemsOf(field(added, 'tags')).instances).toBe(5);
    // Claimed from them: five shaped bodies, one without `note`, and four unshaped make `person.address.city` required.
    const claimed = claimRequired(added) as ObjectShape;
    expect(requiredOf(field(field(claimed, 'person'), 'address'))).toEqual({ city: true });
    expect(requiredOf(field(claimRequired(nested), 'person'))).toEqual({
      address: false,
      name: false,
    });
    expect(withoutInstances(counted)).toEqual(body);
  });

  it('claims required from six objects once a body varies, from presence while it does not', () => {
    // Three answers, always the same fields: presence, as before counts existed.
    const steady = countInstances(inferShape({ id: 1, title: 't' }), 3);
    expect(requiredOf(claimRequired(steady))).toEqual({ id: true, title: true });
    // The body varies (`note` missing once): a field three answers had is not claimed required.
    let varied = mergeCountedShapes(
      countInstances(inferShape({ id: 1, title: 't', note: 'n' }), 2),
      inferShape({ id: 2, title: 'u' }),
    );
    expect(requiredOf(claimRequired(varied))).toEqual({ id: false, note: false, title: false });
    // Four and five objects are not enough (they were until session 22): an optional field the
    // answers of the bench's sources all had in four or five objects was as often optional as not.
    for (const id of [3, 4]) {
      varied = mergeCountedShapes(varied, inferShape({ id, title: 'v' }));
      expect(requiredOf(claimRequired(varied))).toEqual({ id: false, note: false, title: false });
    }
    // One answer more: six objects all had `id` and `title`.
    const more = mergeCountedShapes(varied, inferShape({ id: 5, title: 'w' }));
    expect(requiredOf(claimRequired(more))).toEqual({ id: true, note: false, title: true });
    // Records of one list count one by one: six records all had `id`, two had `name`.
    const list = inferShape(records(6, (i) => (i < 2 ? { id: i, name: 'x' } : { id: i })));
    expect(itemsOf(claimRequired(list))).toEqual({
      kind: 'object',
      fields: [
        { name: 'id', required: true, shape: { kind: 'number' } },
        { name: 'name', required: false, shape: { kind: 'string' } },
      ],
    });
    const claimed = JSON.stringify(claimRequired(more));
    expect(claimed).not.toContain('instances');
  });

  it('claims nothing required from one error answer alone, from presence in two or in any other answer', () => {
    const error = inferShape({ code: 404, message: 'no such post', details: [{ reason: 'gone' }, { reason: 'old' }] });
    // One 404 (or any 4xx, 5xx) answer: no field at its top is claimed; its list's two records are two objects.
    const once = claimRequired(error, 'error') as ObjectShape;
    expect(requiredOf(once)).toEqual({ code: false, details: false, message: false });
    expect(itemsOf(once.fields[1]!.shape).fields[0]!.required).toBe(true);
    // Two error answers with the same fields: presence, as for any other answer.
    expect(requiredOf(claimRequired(countInstances(error, 2), 'error'))).toEqual({
      code: true,
      details: true,
      message: true,
    });
    // One answer of any other status, or one request body: presence (one `POST /posts` documents `title` required).
    expect(requiredOf(claimRequired(error))).toEqual({ code: true, details: true, message: true });
    expect(requiredOf(claimRequired(error, 'other'))).toEqual({ code: true, details: true, message: true });
  });
});
