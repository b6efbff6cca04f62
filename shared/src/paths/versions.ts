/**
 * Version numbers inside a route (docs/paths.md, Version numbers): `/oauth2/1/authorize`,
 * `/account/2/verify`. A short number right after a literal is an identifier for the detectors
 * (`/posts/5/comments`), and so it stays until the traffic shows it a version: the same number
 * followed by many different routes, never requested on its own, and few numbers there at all.
 * An identifier is the other way round: many values, each with a few routes of the resource, and
 * the resource itself (`GET /posts/5`).
 */
import { introducesNames, joinSegments, splitPath, type Segment } from './segments';

/** What was seen right after one all-literal prefix (`/oauth2`). */
interface NumberPosition {
  /** The short numbers seen there (`MAX_VERSIONS` at most). */
  numbers: Set<string>;
  /** An identifier there that is no short number (`/posts/123456`), or more numbers than `MAX_VERSIONS`: values, not versions. */
  identifiers: boolean;
}

/** What one short number at one depth was seen with, under every all-literal prefix. */
interface NumberSeen {
  /** The prefixes and next segments it was followed by (`/oauth2 authorize`; `VERSION_ROUTES` at most). */
  routes: Set<string>;
  /** It ended a path the API answered (`/posts/5`): a resource, no version. */
  ends: boolean;
}

/** A short number as versions are written (`1`, `2`, `12`; not `0`, not `007`). */
const SHORT_NUMBER = /^[1-9]\d?$/;
/** A short number with more after it somewhere in a raw path. */
const SHORT_NUMBER_INSIDE = /\/[1-9]\d?\//;
/** Different routes after one number that make it a version (`/oauth2/1/authorize`, `/oauth2/1/token`, …). */
const VERSION_ROUTES = 4;
/** Numbers at one position at most for them to be versions: an API has few. */
const MAX_VERSIONS = 3;
/** Prefixes watched at most (memory bound); past it, no new position is watched. */
const MAX_PREFIXES = 1_000;

export class VersionNumbers {
  private readonly positions = new Map<string, NumberPosition>();
  /** `depth/number` → what it was seen with. */
  private readonly numbers = new Map<string, NumberSeen>();
  private count = 0;

  /** Grows each time a number is shown a version, or no more one. */
  get changes(): number {
    return this.count;
  }

  /**
   * Take one raw path the API answered (other than 404/405), as the detectors templated it
   * (`template`), as evidence; once per distinct raw path. Only the first number after literals
   * is looked at. Returns true when what `keeps` says changed.
   */
  note(template: string, raw: string): boolean {
    const segments = splitPath(template);
    const values = splitPath(raw);
    if (values.length !== segments.length) return false;
    for (let at = 1; at < segments.length; at++) {
      const segment = segments[at]!;
      const value = values[at]!;
      if (value.kind !== 'literal') return false;
      const short = SHORT_NUMBER.test(value.text);
      // A literal: go on, unless it is a number kept as a version (looked at as any number here).
      if (segment.kind === 'literal' && !(short && this.isVersion(at, value.text))) {
        if (introducesNames(segment)) return false;
        continue;
      }
      const key = joinSegments(segments.slice(0, at));
      let position = this.positions.get(key);
      if (position === undefined) {
        if (this.positions.size >= MAX_PREFIXES) return false;
        this.positions.set(key, (position = { numbers: new Set(), identifiers: false }));
      }
      if (position.identifiers) return false;
      if (!short || (!position.numbers.has(value.text) && position.numbers.size >= MAX_VERSIONS)) {
        position.identifiers = true;
        position.numbers.clear();
        // What `keeps` says here changes only once some number is a version.
        return this.count > 0 && this.changed();
      }
      position.numbers.add(value.text);
      const word = `${at}/${value.text}`;
      let seen = this.numbers.get(word);
      if (seen === undefined) this.numbers.set(word, (seen = { routes: new Set(), ends: false }));
      const was = this.isVersion(at, value.text);
      const next = segments[at + 1];
      if (next === undefined) seen.ends = true;
      else if (seen.routes.size < VERSION_ROUTES)
        seen.routes.add(`${key} ${next.kind === 'literal' ? next.text : '{}'}`);
      return was !== this.isVersion(at, value.text) && this.changed();
    }
    return false;
  }

  /**
   * Is the short number `text`, right after the segments `before` (as templated so far), a version
   * shown by the traffic? `templatePath` keeps such a number literal.
   */
  keeps(before: readonly Segment[], text: string): boolean {
    if (this.count === 0 || before.length === 0 || before.some((segment) => segment.kind !== 'literal')) return false;
    return this.positions.get(joinSegments(before))?.identifiers !== true && this.isVersion(before.length, text);
  }

  /**
   * May the path `raw` (templated as `template`) still come out otherwise: a short number right
   * after an all-literal prefix, followed by more, where versions may still be shown? Held like an
   * undecided literal, so a version's first requests are not reported under a parameter.
   */
  undecided(template: string, raw: string): boolean {
    // Most paths hold no short number followed by more: told without splitting them.
    if (!template.includes('}/') || !SHORT_NUMBER_INSIDE.test(raw)) return false;
    const segments = splitPath(template);
    const values = splitPath(raw);
    if (values.length !== segments.length) return false;
    for (let at = 1; at < segments.length - 1; at++) {
      const segment = segments[at]!;
      if (segment.kind === 'literal') continue;
      const value = values[at]!;
      if (value.kind !== 'literal' || !SHORT_NUMBER.test(value.text)) return false;
      if (this.positions.get(joinSegments(segments.slice(0, at)))?.identifiers === true) return false;
      return this.numbers.get(`${at}/${value.text}`)?.ends !== true;
    }
    return false;
  }

  /** A version: followed by `VERSION_ROUTES` different routes, never a path's end. */
  private isVersion(at: number, text: string): boolean {
    const seen = this.numbers.get(`${at}/${text}`);
    return seen !== undefined && !seen.ends && seen.routes.size >= VERSION_ROUTES;
  }

  private changed(): true {
    this.count++;
    return true;
  }
}
