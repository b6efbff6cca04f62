/**
 * Templates users state in the dashboard (docs/paths.md, Hints): a segment of an endpoint's path
 * made a parameter, or literal siblings merged into one template. Parameters are named like the
 * agent names them: after the singular of the literal before (`/images/{image}`), else `id`.
 */
import { joinSegments, parameterNoun, type Segment, splitPath } from './segments';

/** A name for a parameter after `previous` not yet taken in `taken` (`image`, then `image2`, …). */
function freshName(previous: Segment | undefined, taken: Set<string>): string {
  const base = parameterNoun(previous) ?? 'id';
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}${n}`;
  taken.add(name);
  return name;
}

/**
 * `path` with its segment at `index` (0-based) made a parameter: `/images/alice-cli`, 1 →
 * `/images/{image}`. Undefined when there is no such segment or it is a parameter already.
 */
export function withParameterAt(path: string, index: number): string | undefined {
  const segments = splitPath(path);
  if (segments[index]?.kind !== 'literal') return undefined;
  const taken = new Set(segments.flatMap((s) => (s.kind === 'param' ? [s.name] : [])));
  segments[index] = { kind: 'param', name: freshName(segments[index - 1], taken) };
  return joinSegments(segments);
}

/**
 * One template for literal siblings: every position where the paths differ becomes a parameter
 * (`/images/alice-cli` and `/images/bob-web` → `/images/{image}`; a parameter some path has there
 * keeps its name). Undefined unless there are 2+ paths, all with the same number of segments,
 * and they differ somewhere.
 */
export function siblingTemplate(paths: readonly string[]): string | undefined {
  const split = paths.map(splitPath);
  const first = split[0];
  if (first === undefined || split.length < 2 || split.some((s) => s.length !== first.length)) return undefined;
  const taken = new Set(split.flatMap((segments) => segments.flatMap((s) => (s.kind === 'param' ? [s.name] : []))));
  const template: Segment[] = [];
  let differs = false;
  first.forEach((segment, i) => {
    const column = split.map((segments) => segments[i] as Segment);
    const same = column.every((s) =>
      s.kind === 'literal'
        ? segment.kind === 'literal' && s.text === segment.text
        : segment.kind === 'param' && s.name === segment.name,
    );
    if (same) {
      template.push(segment);
      return;
    }
    differs = true;
    const named = column.find((s) => s.kind === 'param');
    template.push(named ?? { kind: 'param', name: freshName(template[i - 1], taken) });
  });
  return differs ? joinSegments(template) : undefined;
}
