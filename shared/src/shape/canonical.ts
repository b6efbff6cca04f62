import {
  BAR,
  BOOLEAN_CODE,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  CLOSE_ONE_OF,
  COLON,
  COMMA,
  NULL_CODE,
  NUMBER_CODE,
  OPEN_ARRAY,
  OPEN_OBJECT,
  OPEN_ONE_OF,
  OPTIONAL,
  TRUNCATED,
  UNKNOWN_CODE,
  writeFieldName,
  writeString,
  type CanonicalSink,
} from './canonical-text';
import { compareNames, kindRank, MAX_SHAPE_DEPTH } from './options';
import type { Field, Shape } from './types';

export type { CanonicalSink } from './canonical-text';

/**
 * The canonical text of a shape: equal shapes give equal text, whatever the order of fields or
 * options in the data (documented in docs/shapes.md). Grammar:
 * `S` / `S(format)` string, `N` number, `B` boolean, `Z` null, `U` unknown (`U!` truncated),
 * `{"name":T,"other"?:T}` object with fields in code-unit order, names as JSON strings and `?`
 * for optional (`{…}!` truncated), `[T]` array (`[T]!` truncated), `(T|T)` oneOf in canonical
 * kind order. An object's `instances` are not written: counts travel beside the fingerprint
 * (`instanceExtras`).
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
      writeString(shape.format, sink);
      return;
    case 'number':
      sink.writeCode(NUMBER_CODE);
      return;
    case 'boolean':
      sink.writeCode(BOOLEAN_CODE);
      return;
    case 'null':
      sink.writeCode(NULL_CODE);
      return;
    case 'unknown':
      sink.writeCode(UNKNOWN_CODE);
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
        writeFieldName(field.name, sink);
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
        const texts = shape.options.map((option) => ({
          rank: kindRank(option.kind),
          text: canonicalText(option, depth),
        }));
        texts.sort((a, b) => a.rank - b.rank || compareNames(a.text, b.text));
        sink.write(texts.map((option) => option.text).join('|'));
      }
      sink.writeCode(CLOSE_ONE_OF);
      return;
  }
}

function inNameOrder(fields: readonly Field[]): readonly Field[] {
  for (let i = 1; i < fields.length; i++) {
    if (fields[i - 1]!.name > fields[i]!.name) return [...fields].sort((a, b) => compareNames(a.name, b.name));
  }
  return fields;
}

function inKindOrder(options: readonly Shape[]): boolean {
  for (let i = 1; i < options.length; i++)
    if (kindRank(options[i - 1]!.kind) >= kindRank(options[i]!.kind)) return false;
  return true;
}
