// @ts-check
// A seeded pseudo-random generator (mulberry32), so the corpus, the traffic and its values are
// the same on every run.

/**
 * @typedef {object} Rng
 * @property {() => number} next a number in [0, 1)
 * @property {(min: number, max: number) => number} int an integer in [min, max]
 * @property {<T>(items: readonly T[]) => T} pick one of the items (not empty)
 * @property {<T>(items: readonly T[]) => T[]} shuffle a shuffled copy
 * @property {(label: string) => Rng} fork an independent generator for a sub-task, by label
 */

/**
 * 32-bit FNV-1a of a string: turns a label into a seed.
 * @param {string} text
 * @returns {number}
 */
function hashString(text) {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * @param {number | string} seed
 * @returns {Rng}
 */
function createRng(seed) {
  const base = typeof seed === 'number' ? seed >>> 0 : hashString(seed);
  let state = base;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  /** @type {Rng} */
  const rng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => {
      if (items.length === 0) throw new Error('rng.pick: no items');
      return /** @type {any} */ (items[Math.floor(next() * items.length)]);
    },
    shuffle: (items) => {
      const copy = [...items];
      for (let index = copy.length - 1; index > 0; index--) {
        const other = Math.floor(next() * (index + 1));
        [copy[index], copy[other]] = [/** @type {any} */ (copy[other]), /** @type {any} */ (copy[index])];
      }
      return copy;
    },
    fork: (label) => createRng(hashString(`${base}:${label}`)),
  };
  return rng;
}

module.exports = { createRng, hashString };
