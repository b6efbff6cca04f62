import type { EnvironmentKind, ProjectRole, TokenScope } from '@spectator/shared';

/** A person signed in through the identity provider, as stored at their last sign-in. */
export interface Person {
  /** Our id of the person (`users.id`). */
  id: string;
  /** The provider's issuer and its subject (`sub`): together the person's identity. */
  issuer: string;
  subject: string;
  name: string | null;
  email: string | null;
  /** Groups from the configured groups claim at the last sign-in. */
  groups: string[];
  /** In one of SPECTATOR_OIDC_ADMIN_GROUPS: admin of every project, may create projects. */
  instanceAdmin: boolean;
}

/** A caller authenticated by a bearer token. */
export interface TokenPrincipal {
  kind: 'token';
  tokenId: string;
  name: string;
  scope: TokenScope;
  /** `null` for the bootstrap admin token (every project). */
  projectId: string | null;
  environments: EnvironmentKind[] | null;
}

/** A person authenticated by a session cookie. `role` is set once a route's project is resolved. */
export interface PersonPrincipal {
  kind: 'person';
  /** Sessions are not tokens: kept so code reading `tokenId` sees that none is behind the call. */
  tokenId: null;
  name: string;
  person: Person;
  /** SHA-256 of the session id (the `sessions` key), to end it on sign-out. */
  sessionHash: string;
  /** The double-submit value a state-changing request must send in `X-CSRF-Token`. */
  csrfToken: string;
  /** The person's role in the route's project; `null` outside a project or when not a member. */
  role: ProjectRole | null;
  /** The scope equivalent to the role, so code written for tokens reads one field. */
  scope: TokenScope;
  projectId: null;
  environments: null;
}

/** Who is calling: a token (agents, automation, local sign-in) or a signed-in person. */
export type Principal = TokenPrincipal | PersonPrincipal;

/** The actor recorded on proposals, steps and audit entries. */
export interface Actor {
  kind: 'person' | 'token';
  /** `users.id` or `tokens.id`. */
  id: string;
  name: string;
  email: string | null;
  /** The provider subject (`sub`) of a person; null for a token. */
  subject: string | null;
}

/** The actor behind a principal. */
export function actorOf(principal: Principal): Actor {
  if (principal.kind === 'person') {
    const { person } = principal;
    return { kind: 'person', id: person.id, name: principal.name, email: person.email, subject: person.subject };
  }
  return { kind: 'token', id: principal.tokenId, name: principal.name, email: null, subject: null };
}

/** A stable key of an actor (`person:<id>`, `token:<id>`), compared for four-eyes approval. */
export function actorKey(actor: Pick<Actor, 'kind' | 'id'>): string {
  return `${actor.kind}:${actor.id}`;
}

/**
 * How a person is named where an actor is recorded (proposal steps, versions, webhooks):
 * `Name <email>`, or whichever of them the provider sent, else the subject.
 */
export function personLabel(person: Person): string {
  if (person.name !== null && person.email !== null && person.name !== person.email)
    return `${person.name} <${person.email}>`;
  return person.name ?? person.email ?? person.subject;
}
