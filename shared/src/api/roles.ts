import { scopeAllows } from './scopes';
import type { ProjectRole, TokenScope } from './types';

/** The roles, weakest first: each role may do what the ones before it may. */
export const PROJECT_ROLES: readonly ProjectRole[] = ['viewer', 'editor', 'approver', 'admin'];

/**
 * What a route needs: `read` (viewer), `write` (editor: document, propose), `approve` (approver:
 * approve proposals), `admin` (tokens, webhooks, members, project settings).
 */
export type Access = 'read' | 'write' | 'approve' | 'admin';

const ROLE_RANK: Record<ProjectRole, number> = { viewer: 1, editor: 2, approver: 3, admin: 4 };
const ACCESS_ROLE: Record<Access, ProjectRole> = {
  read: 'viewer',
  write: 'editor',
  approve: 'approver',
  admin: 'admin',
};

/** Whether a person's role covers what a route needs. */
export function roleAllows(held: ProjectRole, needed: Access): boolean {
  return ROLE_RANK[held] >= ROLE_RANK[ACCESS_ROLE[needed]];
}

/**
 * Whether a token's scope covers what a route needs. A `write` token approves, as it did before
 * roles existed: automation that documents and approves keeps working.
 */
export function tokenAllows(held: TokenScope, needed: Access | 'agent'): boolean {
  return scopeAllows(held, needed === 'approve' ? 'write' : needed);
}

/** The strongest of some roles, or null for none. */
export function strongestRole(roles: Iterable<ProjectRole>): ProjectRole | null {
  let best: ProjectRole | null = null;
  for (const role of roles) if (best === null || ROLE_RANK[role] > ROLE_RANK[best]) best = role;
  return best;
}

/** The token scope a role is worth, for code that reads one field for tokens and people. */
export function scopeOfRole(role: ProjectRole): Exclude<TokenScope, 'agent'> {
  return role === 'viewer' ? 'read' : role === 'admin' ? 'admin' : 'write';
}

export function isProjectRole(value: unknown): value is ProjectRole {
  return typeof value === 'string' && (PROJECT_ROLES as readonly string[]).includes(value);
}
