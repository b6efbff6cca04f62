import { MAX_SHAPE_DEPTH } from './infer';
import { compareNames, kindRank } from './options';
import type { Field, Shape } from './types';

/** Where canonical text goes: a string being built, or a running hash. */
export interface CanonicalSink {
  write(text: string): void;
  /** Writes one UTF-16 code unit: most of the canonical text is single punctuation characters. */
  writeCode(code: number): void;
}

// The single-character tokens of the canonical text.
const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }
const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const OPEN_ONE_OF = 0x28; // (
const CLOSE_ONE_OF = 0x29; // )
const BAR = 0x7c; // |
const COMMA = 0x2c; // ,
const QUOTE = 0x22; // "
const COLON = 0x3a; // :
const OPTIONAL = 0x3f; // ?
const TRUNCATED = 0x21; // !


const STRING_TEXT: Readonly<Record<string, string>> = { uuid: 'S(uuid)', 'date-time': 'S(date-time)', date: 'S(date)', email: 'S(email)', uri: 'S(uri)' };

/**
 * The canonical text of a shape: equal shapes give equal text, whatever the order of fields or
 * options in the data (documented in docs/shapes.md). Grammar:
 * `S` / `S(format)` string, `N` number, `B` boolean, `Z` null, `U` unknown (`U!` truncated),
 * `{"name":T,"other"?:T}` object with fields in code-unit order, names as JSON strings and `?`
 * for optional (`{…}!` truncated), `[T]` array (`[T]!` truncated), `(T|T)` oneOf in canonical
 * kind order.
 */
export function canonicalShape(shape: Shape): string {
  return canonicalText(shape, 0);
}

function canonicalText(shape: Shape, depth: number): string {
  const text = new TextSink();
  writeCanonical(shape, text, depth);
  return text.value;
}

class TextSink implements CanonicalSink {
  value = '';

  write(piece: string): void {
    this.value += piece;
  }

  writeCode(code: number): void {
    this.value += String.fromCharCode(code);
  }
}

/**
 * Writes the canonical text of `shape` piece by piece (see {@link canonicalShape}), so a hash can
 * take it in without the text ever being built. `depth` is the nesting of `shape` in the body
 * (fields and items count, oneOf options do not). Throws a RangeError for a shape nested deeper
 * than `MAX_SHAPE_DEPTH + 1` levels, which neither inference nor JSON Schema produce.
 */
export function writeCanonical(shape: Shape, sink: CanonicalSink, depth = 0): void {
  // Shapes from inference and JSON Schema are at most MAX_SHAPE_DEPTH + 1 levels deep; a deeper one
  // (hand-made, or from the wire) is refused here rather than overflowing a stack later.
  if (depth > MAX_SHAPE_DEPTH + 1) throw new RangeError(`shape nested deeper than ${MAX_SHAPE_DEPTH + 1} levels`);
  switch (shape.kind) {
    case 'string':
      if (shape.format === undefined) sink.writeCode(0x53); // S
      else sink.write(STRING_TEXT[shape.format] ?? `S(${shape.format})`);
      return;
    case 'number':
      sink.writeCode(0x4e); // N
      return;
    case 'boolean':
      sink.writeCode(0x42); // B
      return;
    case 'null':
      sink.writeCode(0x5a); // Z
      return;
    case 'unknown':
      sink.writeCode(0x55); // U
      if (shape.truncated) sink.writeCode(TRUNCATED);
      return;
    case 'array':
      sink.writeCode(OPEN_ARRAY);
      writeCanonical(shape.items, sink, depth + 1);
      sink.writeCode(CLOSE_ARRAY);
      if (shape.truncated) sink.writeCode(TRUNCATED);
      return;
    case 'object': {
      sink.writeCode(OPEN_OBJECT);
      const fields = inNameOrder(shape.fields);
      for (let i = 0; i < fields.length; i++) {
        const field = fields[i]!;
        if (i > 0) sink.writeCode(COMMA);
        if (isPlainName(field.name)) {
          sink.writeCode(QUOTE);
          sink.write(field.name);
          sink.writeCode(QUOTE);
        } else {
          sink.write(JSON.stringify(field.name));
        }
        if (!field.required) sink.writeCode(OPTIONAL);
        sink.writeCode(COLON);
        writeCanonical(field.shape, sink, depth + 1);
      }
      sink.writeCode(CLOSE_OBJECT);
      if (shape.truncated) sink.writeCode(TRUNCATED);
      return;
    }
    case 'oneOf':
      sink.writeCode(OPEN_ONE_OF);
      if (inKindOrder(shape.options)) {
        for (let i = 0; i < shape.options.length; i++) {
          if (i > 0) sink.writeCode(BAR);
          writeCanonical(shape.options[i]!, sink, depth);
        }
      } else {
        // Not in canonical layout (e.g. built by hand): order by kind, then by text.
        const texts = shape.options.map((option) => ({ rank: kindRank(option.kind), text: canonicalText(option, depth) }));
        texts.sort((a, b) => a.rank - b.rank || compareNames(a.text, b.text));
        sink.write(texts.map((option) => option.text).join('|'));
      }
      sink.writeCode(CLOSE_ONE_OF);
      return;
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

function inNameOrder(fields: readonly Field[]): readonly Field[] {
  for (let i = 1; i < fields.length; i++) {
    if (fields[i - 1]!.name > fields[i]!.name) return [...fields].sort((a, b) => compareNames(a.name, b.name));
  }
  return fields;
}

function inKindOrder(options: readonly Shape[]): boolean {
  for (let i = 1; i < options.length; i++) if (kindRank(options[i - 1]!.kind) >= kindRank(options[i]!.kind)) return false;
  return true;
}
