import type { StringFormat } from './types';

/**
 * Pieces of the canonical text (docs/shapes.md) shared by the two writers of it: `writeCanonical`
 * (from a Shape) and the fused inference of `fingerprintValue` (from what inference accumulated).
 * One definition, so the two cannot drift apart; the fingerprint tests pin both.
 */

/** Where canonical text goes: a string being built, or a running hash. */
export interface CanonicalSink {
  write(text: string): void;
  /** Writes one UTF-16 code unit: most of the canonical text is single punctuation characters. */
  writeCode(code: number): void;
}

// The single-character tokens of the canonical text.
export const OPEN_OBJECT = 0x7b; // {
export const CLOSE_OBJECT = 0x7d; // }
export const OPEN_ARRAY = 0x5b; // [
export const CLOSE_ARRAY = 0x5d; // ]
export const OPEN_ONE_OF = 0x28; // (
export const CLOSE_ONE_OF = 0x29; // )
export const BAR = 0x7c; // |
export const COMMA = 0x2c; // ,
export const COLON = 0x3a; // :
export const OPTIONAL = 0x3f; // ?
export const TRUNCATED = 0x21; // !
export const STRING_CODE = 0x53; // S
export const NUMBER_CODE = 0x4e; // N
export const BOOLEAN_CODE = 0x42; // B
export const NULL_CODE = 0x5a; // Z
export const UNKNOWN_CODE = 0x55; // U
const QUOTE = 0x22; // "

const STRING_TEXT: Readonly<Record<string, string>> = {
  uuid: 'S(uuid)',
  'date-time': 'S(date-time)',
  date: 'S(date)',
  email: 'S(email)',
  uri: 'S(uri)',
};

/** Writes a string shape: `S`, or `S(format)`. */
export function writeString(format: StringFormat | undefined, sink: CanonicalSink): void {
  if (format === undefined) sink.writeCode(STRING_CODE);
  else sink.write(STRING_TEXT[format] ?? `S(${format})`);
}

/**
 * How many objects a shape describes are counted up to this many (`ObjectShape.instances`): once a
 * body varied, documentation claims a field `required` only where this many objects all had it
 * (docs/shapes.md; 4 until session 22: an optional field the answers of the bench's sources all
 * had in 4 or 5 objects was as often optional as required). Counts are not part of the canonical
 * text (so not of the fingerprint): they travel beside it (`instanceExtras`, shape/instances.ts).
 */
export const REQUIRED_INSTANCES = 6;

/**
 * The largest digit of `instanceExtras` (objects at a place beyond one per exchange): with at least
 * one exchange, this many more reach `REQUIRED_INSTANCES`, so more tell nothing more.
 */
export const MAX_EXTRA_INSTANCES = REQUIRED_INSTANCES - 1;

/** Writes a field name as `JSON.stringify` writes it; without building the quoted text when no escape is needed. */
export function writeFieldName(name: string, sink: CanonicalSink): void {
  if (isPlainName(name)) {
    sink.writeCode(QUOTE);
    sink.write(name);
    sink.writeCode(QUOTE);
  } else {
    sink.write(JSON.stringify(name));
  }
}

/** A name JSON.stringify writes as it is between quotes: no quote, backslash, control character or surrogate. */
function isPlainName(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return false;
  }
  return true;
}
