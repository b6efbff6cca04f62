/**
 * Folds of two rows that move one proposal (issue 20): a fold records a proposal's step (and so
 * holds the proposal's row until it commits) only at its end, after the runtime minutes and
 * consumer days it also writes, so a fold of another row reaching another step of the same
 * proposal does not wait for the first fold's heavy writes (the scale bench logged a 179 ms wait
 * on `UPDATE proposals SET status`). Steps still move once, never back.
 */
import { startFoldLocks, type FoldLocks } from './support/fold-locks';

let folds: FoldLocks;

beforeAll(async () => {
  folds = await startFoldLocks('steps');
});
afterAll(async () => {
  await folds?.close();
});

it("a fold does not wait for another row's fold of the same proposal while that one writes its runtime and consumers", async () => {
  const at = new Date().toISOString();
  const production = await folds.queuedRow('production', 'b1', at, ['/items']);
  const staging = await folds.queuedRow('staging', 'b1', at, ['/items']);

  // The production row's fold stops where it writes its runtime minutes and consumer days; the
  // staging row's fold must not wait meanwhile.
  expect(await folds.foldBeside(production, staging)).toBe('folded');

  // Both steps recorded, once each; the status the furthest of them.
  const steps = (await folds.ds.query(
    `SELECT s.step, p.status FROM proposal_steps s JOIN proposals p ON p.id = s.proposal_id
      WHERE p.project_id = $1 ORDER BY s.at, s.step`,
    [folds.project.id],
  )) as Array<{ step: string; status: string }>;
  expect(steps.map((s) => s.step).sort()).toEqual(['Appeared in Production', 'Appeared in Staging', 'Approved']);
  expect(new Set(steps.map((s) => s.status))).toEqual(new Set(['Appeared in Production']));
});
