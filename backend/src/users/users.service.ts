import { Inject, Injectable } from '@nestjs/common';
import type { PersonResponse, ProjectRole } from '@spectator/shared';
import type { Person } from '../common/principal';
import { RUNTIME, type Runtime } from '../config/runtime';
import { type UserRow, UsersRepository } from './users.repository';

/** What the identity provider said about a person at sign-in. */
export interface SignedInClaims {
  issuer: string;
  subject: string;
  name: string | null;
  email: string | null;
  groups: string[];
}

export function toPersonResponse(person: Person): PersonResponse {
  return {
    id: person.id,
    name: person.name,
    email: person.email,
    subject: person.subject,
    instanceAdmin: person.instanceAdmin,
  };
}

/** People: who signed in, and what they may do in a project. */
@Injectable()
export class UsersService {
  private readonly adminGroups: ReadonlySet<string>;

  constructor(
    private readonly users: UsersRepository,
    @Inject(RUNTIME) runtime: Runtime,
  ) {
    this.adminGroups = new Set(runtime.config.oidc?.adminGroups ?? []);
  }

  /** Records a sign-in: the person is created, or their name, email and groups are brought up to date. */
  async signedIn(claims: SignedInClaims): Promise<Person> {
    return this.toPerson(await this.users.upsert(claims));
  }

  /** The person of an id, or null when they were deleted. */
  async byId(id: string): Promise<Person | null> {
    const row = await this.users.byId(id);
    return row === null ? null : this.toPerson(row);
  }

  /** A person's role in a project: admin of every project for an instance admin, else none yet. */
  roleIn(person: Person): ProjectRole | null {
    return person.instanceAdmin ? 'admin' : null;
  }

  private toPerson(row: UserRow): Person {
    return {
      id: row.id,
      issuer: row.issuer,
      subject: row.subject,
      name: row.name,
      email: row.email,
      groups: row.groups,
      instanceAdmin: row.groups.some((group) => this.adminGroups.has(group)),
    };
  }
}
