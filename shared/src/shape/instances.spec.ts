import { canonicalShape } from './canonical';
import { fingerprint } from './fingerprint';
import { inferShape, shapeFingerprint } from './infer';
import { addTopInstances, claimRequired, REQUIRED_INSTANCES, weighInstances, withoutInstances } from './instances';
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
  it('counts the objects at each place of a body up to four, and says nothing for one', () => {
    expect(inferShape({ id: 1 })).toEqual({
      kind: 'object',
      fields: [{ name: 'id', required: true, shape: { kind: 'number' } }],
    });
    expect(itemsOf(inferShape(records(1))).instances).toBeUndefined();
    expect(itemsOf(inferShape(records(2))).instances).toBe(2);
    expect(itemsOf(inferShape(records(3))).instances).toBe(3);
    expect(itemsOf(inferShape(records(4))).instances).toBe(REQUIRED_INSTANCES);
    expect(itemsOf(inferShape(records(500))).instances).toBe(REQUIRED_INSTANCES);
    // Objects under an optional field count where they are: 1 of 3 items has an `owner`.
    const owners = itemsOf(inferShape(records(3, (i) => (i === 0 ? { owner: { name: 'x' } } : {}))));
    expect(owners.fields[0]!.shape).toEqual({ kind: 'object', fields: [expect.objectContaining({ name: 'name' })] });
  });

  it('writes the count in the canonical text and the fingerprint, the same from the value and the shape', () => {
    expect(canonicalShape(inferShape(records(3)))).toBe('[{"id":N}#3]');
    expect(canonicalShape(inferShape(records(1)))).toBe('[{"id":N}]');
    for (const count of [1, 2, 3, 4, 9]) {
      const value = records(count);
      expect(shapeFingerprint(value)).toBe(fingerprint(inferShape(value)));
    }
    const prints = [1, 2, 3, 4, 9].map((count) => shapeFingerprint(records(count)));
    expect(new Set(prints).size).toBe(4);
    expect(prints[3]).toBe(prints[4]);
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

  it('weighs a shape by the exchanges that had it, up to four', () => {
    const body = inferShape({ id: 1, tags: [{ name: 'a' }, { name: 'b' }] });
    const weighed = weighInstances(body, 3) as ObjectShape;
    expect(weighed.instances).toBe(3);
    expect(itemsOf(weighed.fields[1]!.shape).instances).toBe(4);
    expect(weighInstances(body, 1)).toBe(body);
    expect((addTopInstances(body, 2) as ObjectShape).instances).toBe(3);
    expect(addTopInstances(inferShape([{ id: 1 }]), 2)).toEqual(inferShape([{ id: 1 }]));
    expect(withoutInstances(weighed)).toEqual(withoutInstances(body));
    expect(canonicalShape(withoutInstances(weighed))).toBe('{"id":N,"tags":[{"name":S}]}');
  });

  it('claims required from four objects once a body varies, from presence while it does not', () => {
    // Three answers, always the same fields: presence, as before counts existed.
    const steady = weighInstances(inferShape({ id: 1, title: 't' }), 3);
    expect(requiredOf(claimRequired(steady))).toEqual({ id: true, title: true });
    // The body varies (`note` missing once): a field three answers had is not claimed required.
    const varied = mergeCountedShapes(
      weighInstances(inferShape({ id: 1, title: 't', note: 'n' }), 2),
      inferShape({ id: 2, title: 'u' }),
    );
    expect(requiredOf(claimRequired(varied))).toEqual({ id: false, note: false, title: false });
    // One answer more: four objects all had `id` and `title`.
    const more = mergeCountedShapes(varied, inferShape({ id: 3, title: 'v' }));
    expect(requiredOf(claimRequired(more))).toEqual({ id: true, note: false, title: true });
    // Records of one list count one by one: four records all had `id`, two had `name`.
    const list = inferShape(records(4, (i) => (i < 2 ? { id: i, name: 'x' } : { id: i })));
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
});
