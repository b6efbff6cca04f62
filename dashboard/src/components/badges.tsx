import type { ReactNode } from 'react';

/** An HTTP method in its own colour, so lists scan quickly. */
export function MethodBadge({ method }: { method: string }) {
  return <span className={`method method-${method.toLowerCase()}`}>{method.toUpperCase()}</span>;
}

/** `METHOD /path` as one unit. */
export function EndpointName({ method, path }: { method: string; path: string }) {
  return (
    <span className="endpoint-name">
      <MethodBadge method={method} />
      <code className="path">{path}</code>
    </span>
  );
}

/** A small label; `tone` sets its colour. */
export function Badge({
  tone = 'neutral',
  children,
  title,
}: {
  tone?: 'neutral' | 'warn' | 'danger' | 'ok' | 'info';
  children: ReactNode;
  title?: string;
}) {
  return (
    <span className={`badge badge-${tone}`} title={title}>
      {children}
    </span>
  );
}

/** Marks a change that breaks consumers (or says it does not). */
export function BreakingBadge({ breaking }: { breaking: boolean }) {
  return breaking ? <Badge tone="danger">breaking</Badge> : <Badge tone="ok">non-breaking</Badge>;
}
