import { inferShape, type Shape } from '@spectator/shared';

/**
 * A stream of items (server-sent events, JSON lines) is shaped from at most its first 64 KiB: such
 * a response may last for hours, and many may be open at once, so each keeps a small prefix only.
 */
export const STREAM_PREFIX_BYTES = 64 * 1024;

/** Items looked at per stream: the array shape then stays untruncated (`maxItems` is 1,000). */
const MAX_ITEMS = 1_000;

/**
 * The shape of a stream body as the array of its items: each server-sent event's data (JSON, or a
 * string when the data is not JSON, like `[DONE]`), each JSON line, or each JSON text of a sequence
 * (RFC 7464). Only complete items count: an item the kept bytes cut off is left out. `null` when a
 * JSON lines or sequence body holds something that is not JSON; `'no-items'` when the kept bytes of
 * a `cut` stream hold no complete item (nothing seen to shape, unlike a stream that ended empty).
 * Event names, ids and comments are not looked at, and nothing here keeps a value: the shape holds
 * kinds and field names only.
 */
export function streamShape(bytes: Buffer, contentType: string, cut: boolean): Shape | null | 'no-items' {
  const text = bytes.toString('utf8');
  if (contentType === 'text/event-stream') {
    const events = eventData(text);
    return cut && events.length === 0 ? 'no-items' : inferShape(events.map(parseOrText));
  }
  const items = contentType === 'application/json-seq' ? text.split('\x1e') : text.split('\n');
  // The last piece is complete only when the body ended there (JSON lines may omit the last newline).
  if (cut) items.pop();
  const values: unknown[] = [];
  for (const item of items) {
    if (values.length === MAX_ITEMS) break;
    const json = item.trim();
    if (json === '') continue;
    try {
      values.push(JSON.parse(json));
    } catch {
      return null;
    }
  }
  return cut && values.length === 0 ? 'no-items' : inferShape(values);
}

/**
 * The data of each complete server-sent event (HTML Living Standard, "Interpreting an event
 * stream"): lines end in CRLF, LF or CR; a blank line ends an event; `data` lines join with a
 * newline; an event without data is not dispatched, nor is one the stream ends before its blank line.
 */
function eventData(text: string): string[] {
  const events: string[] = [];
  let data: string[] = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === '') {
      if (data.length > 0) events.push(data.join('\n'));
      data = [];
      if (events.length === MAX_ITEMS) break;
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== 'data') continue;
    const value = colon < 0 ? '' : line.slice(line.charCodeAt(colon + 1) === 0x20 ? colon + 2 : colon + 1);
    data.push(value);
  }
  return events;
}

function parseOrText(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}
