import { inferShape, type Shape } from '@spectator/shared';

/** One container open at some point of the scan: its kind, and for an object the key whose value is open. */
interface Open {
  array: boolean;
  key: string;
  /** An array: where its last complete item ends (-1 before one), and the keys of the containers around it then. */
  itemEnd: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;

/**
 * The shape of the first bytes of a JSON text cut off by the body limit (a body larger than the
 * limit: its first `--body-limit` bytes are kept). The text is cut back to a point where closing
 * the containers still open gives valid JSON, and those containers are marked `truncated` in the
 * shape (fields or items beyond the cut were not seen), as the depth and size limits of
 * `inferShape` mark what they cut:
 * - preferably right after the last complete item of the outermost array that has one, so a list
 *   of records is shaped from its whole records (`{"data":[{…},{…},{…cut` → the first two records,
 *   `data` truncated), never from a record cut in half whose missing fields would read as optional;
 * - otherwise right after the last complete value, or the last opening bracket, anywhere.
 * Null when the bytes hold no container at all (a cut scalar) or do not parse as a JSON prefix.
 */
export function jsonPrefixShape(text: string): Shape | null {
  const stack: Open[] = [];
  // The last point where the containers open could be closed: its position and depth.
  let lastEnd = -1;
  let lastDepth = 0;
  /** The string just read was an object's key (followed by a colon). */
  let pendingKey: string | null = null;
  /** A scalar (number, true, false, null) is being read: it ends at the next delimiter. */
  let inScalar = false;
  const valueEnded = (at: number): void => {
    const top = stack[stack.length - 1];
    if (top === undefined) return;
    if (top.array) top.itemEnd = at;
    lastEnd = at;
    lastDepth = stack.length;
  };
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE && !inScalar) {
      // A whole string at once: its closing quote is the next one not escaped (indexOf, not a loop per character).
      let close = text.indexOf('"', i + 1);
      while (close >= 0 && escaped(text, close)) close = text.indexOf('"', close + 1);
      if (close < 0) break; // the text ends inside the string
      // A key when a colon follows (after blanks); otherwise a string value.
      let next = close + 1;
      while (next < text.length && isBlank(text.charCodeAt(next))) next++;
      if (next < text.length && text.charCodeAt(next) === COLON) {
        pendingKey = parseKey(text.slice(i, close + 1));
        if (pendingKey === null) return null;
      } else if (next < text.length) valueEnded(close + 1);
      i = close;
      continue;
    }
    if (inScalar) {
      if (!isDelimiter(code)) continue;
      inScalar = false;
      valueEnded(i);
    }
    switch (code) {
      case 0x7b: // {
      case 0x5b: {
        // [
        const top = stack[stack.length - 1];
        if (top !== undefined && !top.array) {
          if (pendingKey === null) return null;
          top.key = pendingKey;
        }
        pendingKey = null;
        stack.push({ array: code === 0x5b, key: '', itemEnd: -1 });
        lastEnd = i + 1;
        lastDepth = stack.length;
        break;
      }
      case 0x7d: // }
      case 0x5d: // ]
        stack.pop();
        valueEnded(i + 1);
        break;
      case COLON:
      case COMMA:
        break;
      default:
        if (!isBlank(code)) inScalar = true;
    }
  }
  if (lastEnd < 0) return null;
  // The outermost array with a complete item: cut there, deeper partial values dropped.
  let depth = stack.findIndex((open) => open.array && open.itemEnd >= 0) + 1;
  let end: number;
  if (depth > 0) end = (stack[depth - 1] as Open).itemEnd;
  else {
    depth = lastDepth;
    end = lastEnd;
  }
  const open = stack.slice(0, depth);
  let closed = text.slice(0, end);
  for (let k = open.length - 1; k >= 0; k--) closed += open[k]!.array ? ']' : '}';
  let value: unknown;
  try {
    value = JSON.parse(closed);
  } catch {
    return null;
  }
  return markTruncated(inferShape(value), open);
}

/** The shape with each container open at the cut marked truncated, from the root along the open keys. */
function markTruncated(shape: Shape, open: readonly Open[]): Shape {
  const [first, ...rest] = open;
  if (first === undefined) return shape;
  if (shape.kind === 'oneOf') {
    const kind = first.array ? 'array' : 'object';
    return {
      ...shape,
      options: shape.options.map((option) => (option.kind === kind ? markTruncated(option, open) : option)),
    };
  }
  if (shape.kind === 'array') return { ...shape, items: markTruncated(shape.items, rest), truncated: true };
  if (shape.kind === 'object')
    return {
      ...shape,
      fields:
        rest.length === 0
          ? shape.fields
          : shape.fields.map((field) =>
              field.name === first.key ? { ...field, shape: markTruncated(field.shape, rest) } : field,
            ),
      truncated: true,
    };
  return shape;
}

function parseKey(quoted: string): string | null {
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return null;
  }
}

/** Is the quote at `at` escaped (an odd number of backslashes right before it)? */
function escaped(text: string, at: number): boolean {
  let backslashes = 0;
  while (at - backslashes - 1 >= 0 && text.charCodeAt(at - backslashes - 1) === BACKSLASH) backslashes++;
  return backslashes % 2 === 1;
}

function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

function isDelimiter(code: number): boolean {
  return code === COMMA || code === 0x7d || code === 0x5d || isBlank(code);
}
