import { Inject, Injectable } from '@nestjs/common';
import {
  type GroupRoleResponse,
  type MemberResponse,
  type MembersResponse,
  type PersonResponse,
  type ProjectRole,
  strongestRole,
} from '@spectator/shared';
import { AuditService } from '../audit/audit.service';
import { badInput, DomainError, ErrorCode } from '../common/errors';
import { actorOf, type Person, type Principal } from '../common/principal';
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

/** The project a route resolved (users/ needs only its id and slug). */
export interface ProjectRef {
  id: string;
  slug: string;
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
    private readonly audit: AuditService,
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

  async byIds(ids: string[]): Promise<Person[]> {
    return (await this.users.byIds([...new Set(ids)])).map((row) => this.toPerson(row));
  }

  /**
   * A person's role in a project: admin for an instance admin, else the strongest of the role an
   * admin gave them and the roles of their groups there; null when they have none.
   */
  async roleIn(person: Person, projectId: string): Promise<ProjectRole | null> {
    if (person.instanceAdmin) return 'admin';
    return strongestRole(await this.users.rolesIn(projectId, person.id, person.groups));
  }

  /** Ids of the projects a person sees; null for all of them (an instance admin). */
  async projectIdsOf(person: Person): Promise<string[] | null> {
    return person.instanceAdmin ? null : this.users.projectIdsOf(person.id, person.groups);
  }

  /** Ids of the projects a caller sees: a token its own (all for the bootstrap token), a person theirs; null for all. */
  async visibleProjectIds(principal: Principal): Promise<string[] | null> {
    if (principal.kind === 'token') return principal.projectId === null ? null : [principal.projectId];
    return this.projectIdsOf(principal.person);
  }

  async members(project: ProjectRef): Promise<MembersResponse> {
    const [members, groupRoles] = await Promise.all([
      this.users.members(project.id),
      this.users.groupRoles(project.id),
    ]);
    return {
      members: members.map((row) => this.toMemberResponse(row, row.role, row.memberSince)),
      groupRoles,
    };
  }

  /**
   * Gives the person with an email a role in a project.
   * @throws DomainError BadInput when nobody with that email has signed in yet.
   */
  async setMember(project: ProjectRef, by: Principal, email: string, role: ProjectRole): Promise<MemberResponse> {
    const row = await this.users.byEmail(email);
    if (row === null)
      throw badInput(`email ${email}: nobody with this email has signed in yet (they must sign in once first)`);
    const before = await this.users.setMember(project.id, row.id, role);
    await this.audit.record({
      projectId: project.id,
      actor: actorOf(by),
      action: 'member.set',
      target: row.id,
      details: { email: row.email, name: row.name, role, before },
    });
    return this.toMemberResponse(row, role, new Date());
  }

  /** @throws DomainError BadInput when the person is no member. */
  async removeMember(project: ProjectRef, by: Principal, userId: string): Promise<void> {
    const before = await this.users.removeMember(project.id, userId);
    if (before === null)
      throw new DomainError(ErrorCode.BadInput, `userId ${userId} is not a member of project ${project.slug}`);
    await this.audit.record({
      projectId: project.id,
      actor: actorOf(by),
      action: 'member.removed',
      target: userId,
      details: { before },
    });
  }

  /** Replaces the project's group mapping. @throws DomainError BadInput for a group named twice. */
  async replaceGroupRoles(
    project: ProjectRef,
    by: Principal,
    mapping: Array<{ group: string; role: ProjectRole }>,
  ): Promise<GroupRoleResponse[]> {
    const seen = new Set<string>();
    for (const [index, entry] of mapping.entries()) {
      if (seen.has(entry.group)) throw badInput(`groupRoles[${index}] names group ${entry.group} again`);
      seen.add(entry.group);
    }
    const before = await this.users.groupRoles(project.id);
    await this.users.replaceGroupRoles(project.id, mapping);
    await this.audit.record({
      projectId: project.id,
      actor: actorOf(by),
      action: 'group-roles.replaced',
      details: { before, after: mapping },
    });
    return this.users.groupRoles(project.id);
  }

  private toMemberResponse(row: UserRow, role: ProjectRole, memberSince: Date): MemberResponse {
    return {
      person: toPersonResponse(this.toPerson(row)),
      role,
      memberSince: memberSince.toISOString(),
      lastSignInAt: row.lastSignInAt.toISOString(),
    };
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
