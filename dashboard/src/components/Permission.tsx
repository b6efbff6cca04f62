import { scopeAllows, type TokenScope } from '@spectator/shared';
import type { ReactNode } from 'react';
import { useApp } from '../hooks/app';

/** Whether the signed-in token may take an action needing `scope`; true while its scope is unknown (the backend then decides). */
export function useScopeAllows(scope: TokenScope): boolean {
  const { who } = useApp();
  return who === null || scopeAllows(who.scope, scope);
}

/** Says which scope an action needs and which one the signed-in token has. */
export function ScopeNote({ scope, action }: { scope: TokenScope; action: string }) {
  const { who } = useApp();
  return (
    <p className="muted needs-scope" role="note" data-testid="needs-scope">
      {action} needs a token with scope <strong>{scope}</strong>
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
 * Shows `children` (an action) only when the signed-in token's scope allows it; otherwise says
 * which scope the action needs, instead of a button that can only fail.
 */
export function NeedsScope({ scope, action, children }: { scope: TokenScope; action: string; children: ReactNode }) {
  return useScopeAllows(scope) ? <>{children}</> : <ScopeNote scope={scope} action={action} />;
}
