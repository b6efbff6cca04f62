import { type Access, roleAllows, tokenAllows, type TokenScope } from '@spectator/shared';
import type { ReactNode } from 'react';
import { useApp } from '../hooks/app';

/** What an action needs: a token scope, or `approve` (the approver role; a `write` token). */
export type Needed = Exclude<TokenScope, 'agent'> | Extract<Access, 'approve'>;

const ROLE_OF: Record<Needed, string> = { read: 'viewer', write: 'editor', approve: 'approver', admin: 'admin' };

/**
 * Whether the signed-in caller may take an action: a person by their role in the project, a token
 * by its scope; true while unknown (the backend then decides).
 */
export function useScopeAllows(needed: Needed): boolean {
  const { who } = useApp();
  if (who === null) return true;
  if (who.kind === 'person') return who.role !== undefined && roleAllows(who.role, needed);
  return tokenAllows(who.scope, needed);
}

/** Says what an action needs and what the signed-in caller has. */
export function ScopeNote({ scope, action }: { scope: Needed; action: string }) {
  const { who } = useApp();
  if (who?.kind === 'person')
    return (
      <p className="muted needs-scope" role="note" data-testid="needs-scope">
        {action} needs the <strong>{ROLE_OF[scope]}</strong> role in this project; you are{' '}
        <strong>{who.role ?? 'no member'}</strong>.
      </p>
    );
  return (
    <p className="muted needs-scope" role="note" data-testid="needs-scope">
      {action} needs a token with scope <strong>{scope === 'approve' ? 'write' : scope}</strong>
      {who && (
        <>
          ; you signed in with a <strong>{who.scope}</strong> token
        </>
      )}
      .
    </p>
  );
}

/**
 * Shows `children` (an action) only when the signed-in caller may take it; otherwise says what the
 * action needs, instead of a button that can only fail.
 */
export function NeedsScope({ scope, action, children }: { scope: Needed; action: string; children: ReactNode }) {
  return useScopeAllows(scope) ? <>{children}</> : <ScopeNote scope={scope} action={action} />;
}
