import type { ReactNode } from 'react';
import { useApp } from '../hooks/app';
import { routeHref } from '../lib/routes';
import { EndpointName } from './badges';

/** The error of a form or action, announced to screen readers; nothing when there is none. */
export function FormError({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p className="form-error" role="alert">
      {error}
    </p>
  );
}

/**
 * A one-line form (`inline-form`): one required text field, what else it asks (`children`, e.g. a
 * role to give) and its button. `onSubmit` runs with the page's reload prevented.
 */
export function InlineTextForm({
  label,
  value,
  onChange,
  type,
  placeholder,
  submitLabel,
  onSubmit,
  children,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  type?: 'email' | 'url';
  placeholder: string;
  submitLabel: string;
  onSubmit: () => void | Promise<void>;
  children?: ReactNode;
}) {
  return (
    <form
      className="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        void onSubmit();
      }}
    >
      <label>
        {label}
        <input
          type={type}
          value={value}
          onChange={(e) => onChange(e.target.value)}
          required
          placeholder={placeholder}
        />
      </label>
      {children}
      <button type="submit">{submitLabel}</button>
    </form>
  );
}

/** A secret shown once (a new token, a webhook's signing secret), selected on focus for copying. */
export function ShownOnce({
  label,
  value,
  onDone,
  children,
}: {
  label: string;
  value: string;
  onDone: () => void;
  children: ReactNode;
}) {
  return (
    <div className="callout" role="status">
      {children}
      <input className="secret" readOnly value={value} onFocus={(e) => e.target.select()} aria-label={label} />
      <button type="button" className="link" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

/** The top of the screens that belong to one capture's review: the way back, and the endpoint. */
export function ReviewHeader({
  captureId,
  endpoint,
  children,
}: {
  captureId: string;
  endpoint?: { method: string; path: string };
  children?: ReactNode;
}) {
  const { project } = useApp();
  return (
    <>
      <nav className="crumbs" aria-label="Breadcrumb">
        <a href={routeHref({ page: 'captures', project, captureId })}>← Review</a>
      </nav>
      <header className="page-header">
        <div>
          <h1>{endpoint ? <EndpointName method={endpoint.method} path={endpoint.path} /> : 'Commit changes'}</h1>
          {children}
        </div>
      </header>
    </>
  );
}

/** A column of `ListTable`: its heading, right-aligned numbers, a heading only screen readers hear, or one left out on narrow windows. */
export interface Column {
  label: string;
  numeric?: boolean;
  hidden?: boolean;
  /** Left out below 800 px; its cells need the `wide-only` class too. */
  wideOnly?: boolean;
}

/** The lists of the dashboard (endpoints, diffs, agents, tokens, changes): one table layout, scrolling sideways when narrow. */
export function ListTable({
  columns,
  children,
  className = 'list-table',
  testId,
}: {
  columns: Column[];
  children: ReactNode;
  className?: string;
  testId?: string;
}) {
  return (
    <div className="table-scroll">
      <table className={className} data-testid={testId}>
        <thead>
          <tr>
            {columns.map((column) => (
              <th
                key={column.label}
                scope="col"
                className={
                  [column.numeric && 'num', column.wideOnly && 'wide-only'].filter(Boolean).join(' ') || undefined
                }
              >
                {column.hidden ? <span className="visually-hidden">{column.label}</span> : column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
