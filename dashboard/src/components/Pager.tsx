import { useEffect, useState } from 'react';
import { formatCount } from '../lib/format';

/** Rows a list table renders at once: a Review of 10^5 endpoints rendered whole took 18.7 s (issue 15). */
export const PAGE_ROWS = 250;

/**
 * One page of `items` (`PAGE_ROWS` at a time) and the pager's state. Back to the first page when
 * the list changes (a filter, a reload), so the page never points past its end.
 */
export function usePage<T>(items: readonly T[], size = PAGE_ROWS): { rows: readonly T[]; pager: PagerState } {
  const [page, setPage] = useState(0);
  useEffect(() => setPage(0), [items]);
  const last = Math.max(0, Math.ceil(items.length / size) - 1);
  const current = Math.min(page, last);
  return {
    rows: items.slice(current * size, (current + 1) * size),
    pager: { page: current, last, size, total: items.length, go: setPage },
  };
}

export interface PagerState {
  page: number;
  last: number;
  size: number;
  total: number;
  go(page: number): void;
}

/** "1–1,000 of 100,000" with Previous and Next; nothing when everything fits on one page. */
export function Pager({ pager, testId }: { pager: PagerState; testId?: string }) {
  if (pager.last === 0) return null;
  const from = pager.page * pager.size + 1;
  const to = Math.min(pager.total, (pager.page + 1) * pager.size);
  return (
    <nav className="pager" aria-label="Pages" data-testid={testId}>
      <button type="button" onClick={() => pager.go(pager.page - 1)} disabled={pager.page === 0}>
        Previous
      </button>
      <span className="muted">
        {formatCount(from)}–{formatCount(to)} of {formatCount(pager.total)}
      </span>
      <button type="button" onClick={() => pager.go(pager.page + 1)} disabled={pager.page === pager.last}>
        Next
      </button>
    </nav>
  );
}
