import { Turns } from './agent-gateway';

/** A piece of work that runs until `finish` is called, noting when it started. */
function held(started: string[], name: string): { work: () => Promise<string>; finish: () => void } {
  let finish = (): void => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    work: async () => {
      started.push(name);
      await done;
      return name;
    },
    finish: () => finish(),
  };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('Turns', () => {
  it('runs at most its limit at once, the rest in the order they came', async () => {
    const turns = new Turns(2);
    const started: string[] = [];
    const works = ['a', 'b', 'c', 'd', 'e'].map((name) => held(started, name));
    const results = works.map(({ work }) => turns.run(work));
    await settle();
    expect(started).toEqual(['a', 'b']);
    works[1]?.finish();
    await settle();
    expect(started).toEqual(['a', 'b', 'c']);
    works[0]?.finish();
    works[2]?.finish();
    await settle();
    expect(started).toEqual(['a', 'b', 'c', 'd', 'e']);
    works[3]?.finish();
    works[4]?.finish();
    await expect(Promise.all(results)).resolves.toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('gives the turn of work that failed to the next', async () => {
    const turns = new Turns(1);
    const started: string[] = [];
    const failing = turns.run(async () => {
      started.push('failing');
      throw new Error('database away');
    });
    const next = held(started, 'next');
    const after = turns.run(next.work);
    await expect(failing).rejects.toThrow('database away');
    await settle();
    expect(started).toEqual(['failing', 'next']);
    next.finish();
    await expect(after).resolves.toBe('next');
    // Its turn ended too: a later piece of work starts at once.
    const later = held(started, 'later');
    const last = turns.run(later.work);
    await settle();
    expect(started).toEqual(['failing', 'next', 'later']);
    later.finish();
    await last;
  });
});
