import type { CaptureResponse, ChangeResponse, VersionMatrixRow } from '@spectator/shared';

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** A timestamp as a person reads it (local time zone); `—` for none, the raw text if unparsable. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateTime.format(date);
}

/** An ISO 8601 time as the backend writes one into a sentence (`seen until 2026-11-28T10:12:03.120Z`). */
const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})/g;

/** A sentence cut around its ISO 8601 times, so each can be shown as a local date and time: text and times alternate, text first and last. */
export function splitTimes(text: string): { texts: string[]; times: string[] } {
  const texts: string[] = [];
  const times: string[] = [];
  let last = 0;
  for (const match of text.matchAll(ISO_TIME)) {
    const at = match.index ?? 0;
    texts.push(text.slice(last, at));
    times.push(match[0]);
    last = at + match[0].length;
  }
  texts.push(text.slice(last));
  return { texts, times };
}

/** `12 s ago`, `5 min ago`, `3 h ago`, `2 d ago`; `just now` under 5 seconds. `now` in ms since epoch. */
export function timeAgo(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return 'never';
  const then = new Date(iso).getTime();
  if (Number.isNaN(then)) return iso;
  const seconds = Math.round((now - then) / 1000);
  if (seconds < 5) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}

/** The first 7 characters of a commit hash, as git shows it; `—` for none. */
export function shortCommit(commit: string | null | undefined): string {
  return commit ? commit.slice(0, 7) : '—';
}

// One formatter for all counts: `toLocaleString()` builds a new one per call, which shows when a
// Review lists 1,000 endpoints.
const integer = new Intl.NumberFormat();

/** A count as the reader's locale writes it (`1,000`). */
export function formatCount(count: number): string {
  return integer.format(count);
}

/** `1 endpoint`, `2 endpoints`. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${formatCount(count)} ${count === 1 ? singular : pluralForm}`;
}

/**
 * Where a capture or an evidence row ran, as the spec names it: CI runs by pull request,
 * staging and production by build (`CI · PR #42`, `Staging · build s-1`, `Local`).
 */
export function environmentLabel(
  where: Pick<CaptureResponse | VersionMatrixRow, 'pullRequest' | 'build'> & { kind: string; name?: string },
): string {
  const kind = where.kind === 'ci' ? 'CI' : where.kind.charAt(0).toUpperCase() + where.kind.slice(1);
  if (where.kind === 'ci' && where.pullRequest) return `${kind} · PR #${where.pullRequest.replace(/^#/, '')}`;
  if (where.build) return `${kind} · build ${where.build}`;
  if (where.name && where.name !== where.kind) return `${kind} · ${where.name}`;
  return kind;
}

/** A body's label in review and documentation: `Request body` or `201 response`. */
export function bodyLabel(direction: 'request' | 'response', status?: number): string {
  return direction === 'request' ? 'Request body' : `${status ?? ''} response`.trim();
}

/** Where a change is: a body ({@link bodyLabel}), `Query parameter` or `Request header`. */
export function changePlaceLabel(place: ChangeResponse['in'], status?: number): string {
  if (place === 'query') return 'Query parameter';
  if (place === 'header') return 'Request header';
  return bodyLabel(place, status);
}

/**
 * A project slug suggested for a name: lower-case letters, digits and single dashes, at most 63
 * characters, as the backend requires ("Posts API" → "posts-api"); '' when the name has none.
 */
export function slugFor(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}

/** A duration in milliseconds, to two significant figures: `0.42 ms`, `12 ms`, `130 ms`, `1.5 s`. */
export function formatMs(ms: number): string {
  if (ms >= 1000) return `${Number((ms / 1000).toPrecision(2))} s`;
  return `${ms >= 100 ? Math.round(ms) : Number(ms.toPrecision(2))} ms`;
}

/** A rate of 0–1 as a percentage: `0%`, `0.25%`, `3.1%`, `30%`, `100%`. */
export function formatPercent(rate: number): string {
  const percent = rate * 100;
  if (percent === 0 || percent >= 10) return `${Math.round(percent)}%`;
  return `${Number(percent.toPrecision(2))}%`;
}
