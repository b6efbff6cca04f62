import { analyse } from 'scslre';

/**
 * The steps `run` takes, counted rather than timed: each evaluation of a regular expression
 * (every `test`, `match`, `replace`, `split` and `search` goes through `RegExp.prototype.exec`)
 * and each `Set.has` / `Map.get` look-up. With the expressions evaluated (by source and flags).
 * The counters are installed on the prototypes only while `run` runs, synchronously.
 */
export function stepsOf(run: () => void): { steps: number; patterns: RegExp[] } {
  const { exec } = RegExp.prototype;
  const { has } = Set.prototype;
  const { get } = Map.prototype;
  let steps = 0;
  const patterns: Record<string, RegExp> = Object.create(null) as Record<string, RegExp>;
  RegExp.prototype.exec = function (this: RegExp, text: string) {
    steps++;
    patterns[`/${this.source}/${this.flags}`] ??= this;
    return exec.call(this, text);
  };
  Set.prototype.has = function (this: Set<unknown>, value: unknown) {
    steps++;
    return has.call(this, value);
  };
  Map.prototype.get = function (this: Map<unknown, unknown>, key: unknown) {
    steps++;
    return get.call(this, key);
  };
  try {
    run();
  } finally {
    RegExp.prototype.exec = exec;
    Set.prototype.has = has;
    Map.prototype.get = get;
  }
  return { steps, patterns: Object.values(patterns) };
}

/**
 * What makes `pattern` backtrack super-linearly on some long input (scslre's analysis: a quantifier
 * trading characters with another, or with itself), as text; none for a pattern whose work is
 * linear in its input.
 */
export function superLinear(pattern: RegExp): string[] {
  return analyse({ source: pattern.source, flags: pattern.flags }).reports.map(
    (report) => `${report.type}${report.exponential ? ' (exponential)' : ''}`,
  );
}
