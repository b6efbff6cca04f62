import type { TokenScope } from './types';

const SCOPE_RANK: Record<Exclude<TokenScope, 'agent'>, number> = { read: 1, write: 2, admin: 3 };

/**
 * Whether a token's scope covers the scope an action needs. `admin` ⊇ `write` ⊇ `read`; `agent`
 * tokens only stream evidence and are refused everywhere else. The backend enforces it; the
 * dashboard uses it to offer only the actions the signed-in token may take.
 */
export function scopeAllows(held: TokenScope, needed: TokenScope): boolean {
  if (needed === 'agent' || held === 'agent') return held === needed;
  return SCOPE_RANK[held] >= SCOPE_RANK[needed];
}
