import { optionsOf } from '../shape/options';
import type { Field, ObjectShape, Shape } from '../shape/types';
import type { Direction, ShapeChange } from './types';

/** A change as the comparison finds it; the caller adds where (`in`, `status`). */
export type FoundChange = Omit<ShapeChange, 'in' | 'status'>;

/**
 * Receives each change found; returning `true` stops the comparison (conformance only needs to
 * know that there is one).
 */
export type ChangeListener = (change: FoundChange) => boolean;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** JSON path of a field: `$.author`, or `$["first name"]` when the name is not an identifier. */
export function fieldPath(parent: string, name: string): string {
  return IDENTIFIER.test(name) ? `${parent}.${name}` : `${parent}[${JSON.stringify(name)}]`;
}

/**
 * Walks a documented and an observed shape together and reports what the observed one does that
 * the documented one does not allow (closed conformance), each change classified for `direction`
 * (see the table in docs/shapes.md). The one walk behind both `conformsTo` and `diffShapes`.
 * Returns false when the listener stopped it.
 */
export function compareShapes(
  documented: Shape,
  observed: Shape,
  direction: Direction,
  listener: ChangeListener,
): boolean {
  const comparison = new Comparison(direction, listener);
  comparison.compare(documented, observed, '$');
  return !comparison.stopped;
}

class Comparison {
  stopped = false;

  constructor(
    private readonly direction: Direction,
    private readonly listener: ChangeListener,
  ) {}

  compare(documented: Shape, observed: Shape, at: string): void {
    // An observed `unknown` (nothing seen, or cut by a limit) shows nothing the documentation forbids.
    const observedOptions = optionsOf(observed).filter((option) => option.kind !== 'unknown');
    const documentedOptions = optionsOf(documented);
    if (observedOptions.some((option) => !documentedOptions.some((allowed) => allowed.kind === option.kind))) {
      this.report({
        change: 'type changed',
        at,
        documented,
        observed,
        breaking: this.typeChangeBreaks(documentedOptions, observedOptions),
      });
    }
    for (const option of observedOptions) {
      const allowed = documentedOptions.find((candidate) => candidate.kind === option.kind);
      if (allowed !== undefined) this.compareSameKind(allowed, option, at);
    }
  }

  private report(change: FoundChange): void {
    if (!this.stopped && this.listener(change)) this.stopped = true;
  }

  /**
   * A new kind. Nothing was promised where the documentation says `unknown`. A response consumer
   * meets a type it does not handle (a nullable field included). A request that still sends every
   * documented type and more is a server accepting more; one that no longer does is a change.
   */
  private typeChangeBreaks(documentedOptions: readonly Shape[], observedOptions: readonly Shape[]): boolean {
    const promised = documentedOptions.filter((option) => option.kind !== 'unknown');
    if (promised.length === 0) return false;
    if (this.direction === 'response') return true;
    return !promised.every((option) => observedOptions.some((seen) => seen.kind === option.kind));
  }

  private compareSameKind(documented: Shape, observed: Shape, at: string): void {
    if (this.stopped) return;
    switch (documented.kind) {
      case 'string':
        if (observed.kind === 'string' && documented.format !== undefined && observed.format !== documented.format) {
          // A response consumer may parse the format; a request without it is a server accepting more.
          const breaking = this.direction === 'response' || observed.format !== undefined;
          this.report({ change: 'type changed', at, documented, observed, breaking });
        }
        return;
      case 'array':
        if (observed.kind === 'array') this.compare(documented.items, observed.items, `${at}[]`);
        return;
      case 'object':
        if (observed.kind === 'object') this.compareObjects(documented, observed, at);
        return;
      default:
        return;
    }
  }

  private compareObjects(documented: ObjectShape, observed: ObjectShape, at: string): void {
    const documentedFields = new Map(documented.fields.map((field) => [field.name, field]));
    const observedFields = new Map(observed.fields.map((field) => [field.name, field]));
    const names = [...new Set([...documentedFields.keys(), ...observedFields.keys()])].sort();
    for (const name of names) {
      if (this.stopped) return;
      this.compareField(
        documentedFields.get(name),
        observedFields.get(name),
        documented,
        observed,
        fieldPath(at, name),
      );
    }
  }

  private compareField(
    documented: Field | undefined,
    observed: Field | undefined,
    documentedObject: ObjectShape,
    observedObject: ObjectShape,
    at: string,
  ): void {
    const request = this.direction === 'request';
    if (observed === undefined) {
      // Optional fields may be absent; a truncated observation may have cut a field off.
      if (documented!.required && !observedObject.truncated) {
        this.report({ change: 'removed', at, documented: documented!.shape, breaking: !request });
      }
      return;
    }
    if (documented === undefined) {
      // A truncated documented object does not list all its fields: it cannot rule one out.
      if (!documentedObject.truncated)
        this.report({ change: 'added', at, observed: observed.shape, breaking: request && observed.required });
      return;
    }
    if (documented.required && !observed.required) {
      this.report({
        change: 'now optional',
        at,
        documented: documented.shape,
        observed: observed.shape,
        breaking: !request,
      });
    }
    this.compare(documented.shape, observed.shape, at);
  }
}
