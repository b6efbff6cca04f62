// @ts-check
// The path learner's cost on a replay (`--replay <dir> --cost`): its work in steps (`PathLearner.work`: counted,
// the same on every run of the same build and traffic), by what started it, and the CPU it took, in all and in its
// longest step (the pipeline lets the app's answers through between steps, so the longest step is what one request
// may wait). Work is the figure to compare builds on; CPU depends on the machine's load (docs/benchmarks.md).

/** The learner's work in steps, by the pipeline's call that starts it (agent/src/observe/pipeline.ts `learn`). */
const ENTRIES = /** @type {const} */ ({
  query: 'noteQuerySteps',
  observe: 'observeSteps',
  identifiers: 'noteIdentifiersSteps',
});

/**
 * @typedef {object} Cost
 * @property {number} work the learner's work at the end (`PathLearner.work`), in and outside its steps
 * @property {Record<keyof typeof ENTRIES, number>} stepped work done in steps, by the call that started them
 * @property {number} steps steps taken (each resumption of the learner's work)
 * @property {number} longestWork the most work in one step
 * @property {number} stepMicros CPU of the learner's steps (user + system, µs)
 * @property {number} longestMicros CPU of the longest step (µs)
 * @property {number} longestMicrosWork the work of that step
 * @property {number} replayMicros CPU of the whole replay (pipeline, shapes, learner), µs
 */

/** @returns {Cost} nothing spent */
function emptyCost() {
  return {
    work: 0,
    stepped: { query: 0, observe: 0, identifiers: 0 },
    steps: 0,
    longestWork: 0,
    stepMicros: 0,
    longestMicros: 0,
    longestMicrosWork: 0,
    replayMicros: 0,
  };
}

/** @param {Cost} total @param {Cost} one @returns {Cost} both: sums, and the longer of their longest steps */
function addCost(total, one) {
  const longer = one.longestMicros > total.longestMicros ? one : total;
  return {
    work: total.work + one.work,
    stepped: {
      query: total.stepped.query + one.stepped.query,
      observe: total.stepped.observe + one.stepped.observe,
      identifiers: total.stepped.identifiers + one.stepped.identifiers,
    },
    steps: total.steps + one.steps,
    longestWork: Math.max(total.longestWork, one.longestWork),
    stepMicros: total.stepMicros + one.stepMicros,
    longestMicros: longer.longestMicros,
    longestMicrosWork: longer.longestMicrosWork,
    replayMicros: total.replayMicros + one.replayMicros,
  };
}

/** CPU of this process so far, µs. */
const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

/**
 * Meters one replay's pipeline: `watch` it once made, `end` once drained; `cost` then says what it took.
 */
class CostMeter {
  constructor() {
    /** @type {Cost} */
    this.cost = emptyCost();
    /** @type {{ work: number } | null} */
    this.learner = null;
    this.started = 0;
  }

  /**
   * Count the steps of the pipeline's learner from now on: each of its calls that return work in steps returns it
   * metered (what the pipeline resumes is the same work, step for step).
   * @param {object} pipeline an `ObservationPipeline`
   */
  watch(pipeline) {
    const learner = /** @type {Record<string, unknown> & { work: number } | undefined} */ (
      /** @type {any} */ (pipeline).learner
    );
    if (learner === undefined || typeof learner.work !== 'number')
      throw new Error(
        "--cost: the agent's pipeline has no `learner` with a `work` count (agent/src/observe/pipeline.ts)",
      );
    this.learner = learner;
    for (const [entry, name] of Object.entries(ENTRIES)) {
      const method = learner[name];
      if (typeof method !== 'function') throw new Error(`--cost: the path learner has no ${name}`);
      learner[name] = (/** @type {unknown[]} */ ...args) => {
        const steps = /** @type {Generator<void> | undefined} */ (method.apply(learner, args));
        return steps === undefined ? undefined : this.metered(/** @type {keyof typeof ENTRIES} */ (entry), steps);
      };
    }
    this.started = cpuMicros();
  }

  /**
   * @param {keyof typeof ENTRIES} entry
   * @param {Generator<void>} steps
   * @returns {Generator<void>}
   */
  *metered(entry, steps) {
    const learner = /** @type {{ work: number }} */ (this.learner);
    const cost = this.cost;
    for (;;) {
      const work = learner.work;
      const cpu = cpuMicros();
      const done = steps.next().done === true;
      const micros = cpuMicros() - cpu;
      const did = learner.work - work;
      cost.steps++;
      cost.stepped[entry] += did;
      cost.stepMicros += micros;
      cost.longestWork = Math.max(cost.longestWork, did);
      if (micros > cost.longestMicros) {
        cost.longestMicros = micros;
        cost.longestMicrosWork = did;
      }
      if (done) return;
      yield;
    }
  }

  /** The replay is over: its CPU and the learner's work in all. */
  end() {
    this.cost.replayMicros = cpuMicros() - this.started;
    this.cost.work = this.learner?.work ?? 0;
  }
}

/** @param {number} count */
const counted = (count) => count.toLocaleString('en-US');
/** @param {number} micros */
const seconds = (micros) => `${(micros / 1e6).toFixed(2)} s`;
/** @param {number} micros */
const millis = (micros) => `${(micros / 1e3).toFixed(1)} ms`;

/**
 * Two lines: the counted work (the same on every run: diff it between builds), then the CPU (the machine's load
 * moves it).
 * @param {string} label what was replayed (`[heldout20] bbc.co.uk`, `[heldout20] set`)
 * @param {Cost} cost
 * @returns {string[]}
 */
function formatCost(label, cost) {
  const { query, observe, identifiers } = cost.stepped;
  const outside = cost.work - query - observe - identifiers;
  return [
    `${label} cost: learner work ${counted(cost.work)} (steps: observe ${counted(observe)}, query ${counted(query)}, identifiers ${counted(identifiers)}; outside steps ${counted(outside)}), ${counted(cost.steps)} steps, most work in one ${counted(cost.longestWork)}`,
    `${label} cost cpu: replay ${seconds(cost.replayMicros)}, learner steps ${seconds(cost.stepMicros)}, longest step ${millis(cost.longestMicros)} (work ${counted(cost.longestMicrosWork)})`,
  ];
}

module.exports = { CostMeter, emptyCost, addCost, formatCost };
