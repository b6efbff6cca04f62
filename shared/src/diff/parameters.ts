import type { ParameterDoc, ParameterLocation, ParametersDoc } from '../api/types';
import { isDocumentableHeader } from '../http/headers';
import type { ShapeChange } from './types';

/** The names one observation row carries; absent when the row was read without them. */
export interface ObservedNames {
  query?: readonly string[] | null;
  requestHeaders?: readonly string[] | null;
}

/** Documented parameters that document nothing yet: the base a first documentation extends. */
export const NO_PARAMETERS: Readonly<ParametersDoc> = Object.freeze({ query: [], headers: [] });

/** The order of documented parameter lists (for `Array.sort`): by name in code unit order, the same in every locale. */
export function byParameterName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

const LOCATIONS: ReadonlyArray<[ParameterLocation, keyof ParametersDoc]> = [
  ['query', 'query'],
  ['header', 'headers'],
];

/**
 * The parameters some observation rows of one endpoint show: every query parameter name and every
 * documentable request header name (lower-case, {@link isDocumentableHeader}), `required` when
 * every row has it (a row aggregates exchanges and lists the union of their names, so a name
 * missing from a row means some exchange lacked it). Undefined when a row was read without names,
 * so nothing is compared rather than every name looking new.
 */
export function observedParameters(rows: readonly ObservedNames[]): ParametersDoc | undefined {
  if (rows.length === 0 || rows.some((row) => !Array.isArray(row.query) || !Array.isArray(row.requestHeaders)))
    return undefined;
  const count = (lists: ReadonlyArray<readonly string[]>): ParameterDoc[] => {
    const rowsWith = new Map<string, number>();
    for (const names of lists) for (const name of new Set(names)) rowsWith.set(name, (rowsWith.get(name) ?? 0) + 1);
    return [...rowsWith].map(([name, seen]) => ({ name, required: seen === lists.length })).sort(byParameterName);
  };
  return {
    query: count(rows.map((row) => row.query as readonly string[])),
    headers: count(
      rows.map((row) =>
        (row.requestHeaders as readonly string[]).map((name) => name.toLowerCase()).filter(isDocumentableHeader),
      ),
    ),
  };
}

/**
 * Parameter changes from documented to observed, only when both sides have parameter lists: an
 * undocumented query parameter or request header is `added`, a documented required one not sent
 * every time is `now optional`. Neither breaks: a server that reads a new optional parameter, or
 * does without one it required, still serves the clients written for its documentation. A
 * documented optional name not seen is no change. Query parameters first, then headers, by name.
 */
export function parameterChanges(
  documented: ParametersDoc | null | undefined,
  observed: ParametersDoc | null | undefined,
): ShapeChange[] {
  if (!documented || !observed) return [];
  const changes: ShapeChange[] = [];
  for (const [location, list] of LOCATIONS) {
    const seen = new Map(observed[list].map((parameter) => [parameter.name, parameter]));
    const known = new Set(documented[list].map((parameter) => parameter.name));
    const names = [...new Set([...known, ...seen.keys()])].sort();
    for (const name of names) {
      const documentedParameter = documented[list].find((parameter) => parameter.name === name);
      const observedParameter = seen.get(name);
      if (documentedParameter === undefined) changes.push({ change: 'added', in: location, at: name, breaking: false });
      else if (documentedParameter.required && !observedParameter?.required)
        changes.push({ change: 'now optional', in: location, at: name, breaking: false });
    }
  }
  return changes;
}

/**
 * Documented parameters extended by observed ones (a documentation commit): each new name
 * documented as optional, since an observed name is a union over aggregated exchanges; a
 * documented required name stays required only if every exchange sent it (so the traffic
 * accepted conforms to the result); documented names not seen are kept. Undefined observed parameters leave the documentation as it is; undefined
 * documented ones start empty.
 */
export function extendParameters(
  documented: ParametersDoc | null | undefined,
  observed: ParametersDoc | null | undefined,
): ParametersDoc | undefined {
  if (!observed) return documented ?? undefined;
  const base = documented ?? NO_PARAMETERS;
  const extend = (before: readonly ParameterDoc[], seen: readonly ParameterDoc[]): ParameterDoc[] => {
    const sent = new Map(seen.map((parameter) => [parameter.name, parameter.required]));
    const extended = new Map(
      before.map((parameter) => [
        parameter.name,
        { name: parameter.name, required: parameter.required && sent.get(parameter.name) === true },
      ]),
    );
    for (const { name } of seen) if (!extended.has(name)) extended.set(name, { name, required: false });
    return [...extended.values()].sort(byParameterName);
  };
  return { query: extend(base.query, observed.query), headers: extend(base.headers, observed.headers) };
}
