import { Fragment, useSyncExternalStore } from 'react';
import { formatTime, splitTimes, timeAgo } from '../lib/format';

const TICK_MS = 15_000;
let now = Date.now();
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;

/** One shared clock for every relative time on screen, ticking only while one is shown. */
function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  timer ??= setInterval(() => {
    now = Date.now();
    listeners.forEach((notify) => notify());
  }, TICK_MS);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/** `5 min ago`, kept current as time passes, with the exact local time on hover. */
export function TimeAgo({ at }: { at: string | null | undefined }) {
  // The tick only re-renders; the text is computed from the time of this render.
  useSyncExternalStore(subscribe, () => now);
  return (
    <time dateTime={at ?? undefined} title={formatTime(at)}>
      {timeAgo(at)}
    </time>
  );
}

/** A sentence from the backend with its ISO 8601 times shown as local dates and times, like every time on screen. */
export function TextWithTimes({ text }: { text: string }) {
  const { texts, times } = splitTimes(text);
  return (
    <>
      {texts.map((part, i) => (
        <Fragment key={i}>
          {part}
          {times[i] !== undefined && <time dateTime={times[i]}>{formatTime(times[i])}</time>}
        </Fragment>
      ))}
    </>
  );
}
