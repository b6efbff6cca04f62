import type { ReactNode } from 'react';
import { ApiError } from '../api/client';
import type { Resource } from '../hooks/resource';
import { routeHref } from '../lib/routes';

/** A calm placeholder while data loads; announced politely to screen readers. */
export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

/** What went wrong, in the backend's words, with a retry (and sign-in again when the token failed). */
export function ErrorState({ error, retry, what }: { error: Error; retry?: () => void; what?: string }) {
  const apiError = error instanceof ApiError ? error : null;
  // A backend without this part of the API (an older version), or a token whose scope does not
  // reach it, is not an alarm: say so calmly.
  const notAvailable = (apiError?.status === 404 || apiError?.status === 501) && what !== undefined;
  const forbidden = apiError?.status === 403 && what !== undefined;
  const calm = notAvailable || forbidden;
  return (
    <div className={calm ? 'state' : 'state state-error'} role={calm ? 'status' : 'alert'}>
      <strong>{what ? `Could not load ${what}.` : 'Something went wrong.'}</strong>
      <p>
        {notAvailable
          ? `This backend does not offer ${what} (${apiError!.message}).`
          : forbidden
            ? `Your token may not see ${what}: ${apiError!.message}. Sign in with a token of a wider scope (admin) to manage them.`
            : error.message}
      </p>
      <div className="row">
        {retry && (
          <button type="button" onClick={retry}>
            Retry
          </button>
        )}
        {apiError?.unauthorized && <a href={routeHref({ page: 'signin' })}>Sign in again</a>}
      </div>
    </div>
  );
}

/** An empty list, saying what would fill it. */
export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state state-empty">
      <strong>{title}</strong>
      {children && <div>{children}</div>}
    </div>
  );
}

/** Renders a resource: loading, error (with retry) or its data. */
export function Async<T>({
  resource,
  what,
  children,
}: {
  resource: Resource<T>;
  what: string;
  children: (data: T, refreshing: boolean) => ReactNode;
}) {
  if (resource.state === 'loading') return <Loading label={`Loading ${what}…`} />;
  if (resource.state === 'error') return <ErrorState error={resource.error} retry={resource.reload} what={what} />;
  return <>{children(resource.data, resource.refreshing)}</>;
}
