import {
  type Access,
  type AuditPageResponse,
  type MembersResponse,
  type ProjectResponse,
  type ProposalResponse,
  roleAllows,
  type TokenResponse,
  type WhoAmIResponse,
} from '@spectator/shared';
import { createHash } from 'node:crypto';
import { startSsoBackend, TestBrowser } from './support/oidc';
import { apiCall, sqlOn, type TestBackend } from './support';

let sso: Awaited<ReturnType<typeof startSsoBackend>>;
let backend: TestBackend;
/** One signed-in browser per test person (see TEST_ACCOUNTS): their role in `shop` in the comment. */
const people: Record<'alice' | 'bob' | 'carol' | 'dave' | 'erin', TestBrowser> = {} as never;

const planned = (path: string): unknown => ({
  title: `Plan ${path}`,
  endpoints: [
    {
      method: 'GET',
      path,
      responses: [{ status: 200, contentType: 'application/json', schema: { type: 'object', properties: {} } }],
    },
  ],
});

beforeAll(async () => {
  sso = await startSsoBackend();
  backend = sso.backend;
  for (const slug of ['shop', 'other'])
    expect((await backend.api<ProjectResponse>('POST', '/projects', { slug, name: slug })).status).toBe(201);
  // Roles from the groups claim: the mapping is the project's.
  const mapped = await backend.api('PUT', '/projects/shop/group-roles', {
    groupRoles: [
      { group: 'readers', role: 'viewer' },
      { group: 'api-team', role: 'editor' },
      { group: 'api-leads', role: 'approver' },
    ],
  });
  expect(mapped.status).toBe(200);
  for (const name of Object.keys(TEST_PEOPLE) as Array<keyof typeof people>) {
    people[name] = new TestBrowser(backend.url);
    expect((await people[name].signIn(name)).status).toBe(302);
  }
  // Erin is in no mapped group: an admin gives her the admin role by hand (she signed in once).
  const given = await backend.api('PUT', '/projects/shop/members', { email: 'erin@example.test', role: 'admin' });
  expect(given.status).toBe(200);
});
afterAll(() => sso.close());

function sql<T>(text: string, values: unknown[] = []): Promise<T[]> {
  return sqlOn<T>(backend.databaseUrl, text, values);
}

const TEST_PEOPLE = {
  alice: 'admin', // instance admin (spectator-admins)
  bob: 'editor', // api-team
  carol: 'approver', // api-leads and api-team: the strongest counts
  dave: 'viewer', // readers
  erin: 'admin', // member, given by an admin
} as const;

describe('roles', () => {
  it.each(Object.entries(TEST_PEOPLE))('%s is %s in the project', async (name, role) => {
    const me = await people[name as keyof typeof people].api<WhoAmIResponse>('GET', '/projects/shop/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ kind: 'person', project: 'shop', role });
  });

  it('shows each person only the projects they have a role in', async () => {
    expect((await people.dave.api<ProjectResponse[]>('GET', '/projects')).body.map((p) => p.slug)).toEqual(['shop']);
    expect((await people.alice.api<ProjectResponse[]>('GET', '/projects')).body.map((p) => p.slug)).toEqual([
      'other',
      'shop',
    ]);
    expect((await people.dave.api('GET', '/projects/other/captures')).status).toBe(404);
  });

  it('guards every route of a project by role (each operation of the service’s OpenAPI document)', async () => {
    const doc = await apiCall<{ paths: Record<string, Record<string, { 'x-spectator-access'?: string }>> }>(
      backend.url,
      null,
      'GET',
      '/api/docs/openapi.json',
    );
    const checked: string[] = [];
    for (const [path, operations] of Object.entries(doc.body.paths)) {
      if (!path.startsWith('/api/v1/projects/{p}')) continue;
      for (const [method, operation] of Object.entries(operations)) {
        const access = operation['x-spectator-access'] as Access;
        expect({ path, method, access }).toEqual({
          path,
          method,
          access: expect.stringMatching(/^(read|write|approve|admin)$/),
        });
        const route = path
          .slice('/api/v1'.length)
          .replace('{p}', 'shop')
          .replace('{pr}', '1')
          .replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000');
        for (const [name, role] of Object.entries(TEST_PEOPLE)) {
          const answer = await people[name as keyof typeof people].api<{ message?: string }>(
            method.toUpperCase(),
            route,
            method === 'get' ? undefined : {},
          );
          // Guards run before validation: a 403 is the role, anything else means the role was enough.
          const allowed = roleAllows(role, access);
          expect({ route, method, name, status: answer.status === 403 ? 403 : 'not 403' }).toEqual({
            route,
            method,
            name,
            status: allowed ? 'not 403' : 403,
          });
          if (!allowed)
            expect(answer.body.message).toMatch(
              /^this needs the (viewer|editor|approver|admin) role in this project; you are /,
            );
        }
        checked.push(`${method} ${path}`);
      }
    }
    expect(checked.length).toBeGreaterThanOrEqual(30);
  });

  it('lets an editor propose but not approve; an approver approves and is the actor of the step', async () => {
    expect((await people.dave.api('POST', '/projects/shop/proposals', planned('/viewer'))).status).toBe(403);
    const made = await people.bob.api<ProposalResponse>('POST', '/projects/shop/proposals', planned('/orders'));
    expect(made.status).toBe(201);
    expect(made.body.createdBy).toBe('Bob Builder <bob@example.test>');
    const refused = await people.bob.api<{ message: string }>(
      'POST',
      `/projects/shop/proposals/${made.body.id}/approve`,
    );
    expect(refused).toEqual({
      status: 403,
      body: expect.objectContaining({ message: 'this needs the approver role in this project; you are editor' }),
    });
    // Nor through an import that approves at once: refused before it makes anything.
    const proposals = (await people.dave.api<ProposalResponse[]>('GET', '/projects/shop/proposals')).body.length;
    const imported = await people.bob.api<{ message: string }>('POST', '/projects/shop/openapi/import?approve=true', {
      openapi: '3.1.0',
      info: { title: 'T', version: '1' },
      paths: { '/imported': { get: { responses: { '200': { description: 'ok' } } } } },
    });
    expect(imported).toEqual({
      status: 403,
      body: expect.objectContaining({ message: 'this needs the approver role in this project; you are editor' }),
    });
    expect((await people.dave.api<ProposalResponse[]>('GET', '/projects/shop/proposals')).body.length).toBe(proposals);
    const approved = await people.carol.api<ProposalResponse>(
      'POST',
      `/projects/shop/proposals/${made.body.id}/approve`,
    );
    expect(approved.status).toBe(200);
    expect(approved.body.steps[0]).toMatchObject({ step: 'Approved', actor: 'Carol Checker <carol@example.test>' });
  });

  it('with four eyes, refuses the author’s own approval and takes another approver’s', async () => {
    expect((await people.carol.api('PATCH', '/projects/shop', { fourEyes: true })).status).toBe(403);
    const set = await people.erin.api<ProjectResponse>('PATCH', '/projects/shop', { fourEyes: true });
    expect(set).toEqual({ status: 200, body: expect.objectContaining({ slug: 'shop', fourEyes: true }) });
    const made = await people.carol.api<ProposalResponse>('POST', '/projects/shop/proposals', planned('/invoices'));
    const own = await people.carol.api<{ message: string }>('POST', `/projects/shop/proposals/${made.body.id}/approve`);
    expect(own.status).toBe(403);
    expect(own.body.message).toBe(
      `this project requires a second person to approve (four eyes): Carol Checker <carol@example.test> made proposal ${made.body.id}`,
    );
    const other = await people.alice.api<ProposalResponse>('POST', `/projects/shop/proposals/${made.body.id}/approve`);
    expect(other.status).toBe(200);
    expect(other.body.steps[0]?.actor).toBe('Alice Admin <alice@example.test>');
    // Back to one person (other tests approve their own).
    expect((await people.erin.api('PATCH', '/projects/shop', { fourEyes: false })).status).toBe(200);
  });

  it('re-reads groups: removed from a group at the provider, a person loses its role once their sign-in is older than the recheck time', async () => {
    const browser = new TestBrowser(backend.url);
    expect((await browser.signIn('bob')).status).toBe(302);
    expect((await browser.api<WhoAmIResponse>('GET', '/projects/shop/me')).body.role).toBe('editor');
    await sso.provider.setGroups('bob', []);
    try {
      // Until then the groups of the sign-in hold (60 minutes by default, SPECTATOR_OIDC_RECHECK_MINUTES).
      expect((await browser.api<WhoAmIResponse>('GET', '/projects/shop/me')).body.role).toBe('editor');
      const cookie = browser.jar.get(backend.url, 'spectator_session') as string;
      await sql(`UPDATE sessions SET created_at = now() - interval '61 minutes' WHERE id_hash = $1`, [
        createHash('sha256').update(cookie).digest('hex'),
      ]);
      const stale = await browser.api<{ message: string }>('GET', '/projects/shop/me');
      expect(stale).toEqual({
        status: 401,
        body: expect.objectContaining({
          message:
            'sign in again: groups and roles are read from the identity provider at sign-in, and trusted for 60 minutes',
        }),
      });
      // Signing in again reads the groups the provider says now: no role in the project, so no project.
      expect((await browser.signIn('bob')).status).toBe(302);
      expect((await browser.api('GET', '/projects/shop/me')).status).toBe(404);
      expect((await browser.api('POST', '/projects/shop/proposals', planned('/gone'))).status).toBe(404);
    } finally {
      await sso.provider.setGroups('bob', ['api-team']);
    }
  });

  it('answers 400, not 500, for an email that is a lone UTF-16 surrogate (found by the fuzz test)', async () => {
    const answer = await backend.api<{ message: string }>(
      'PUT',
      '/projects/shop/members',
      '{"email":"\\ud800","role":"viewer"}',
    );
    expect(answer).toEqual({
      status: 400,
      body: expect.objectContaining({ message: 'email must be an email address' }),
    });
  });

  it('lets an admin set and remove roles by hand; others may not', async () => {
    expect(
      (await people.carol.api('PUT', '/projects/shop/members', { email: 'dave@example.test', role: 'editor' })).status,
    ).toBe(403);
    const unknown = await people.erin.api<{ message: string }>('PUT', '/projects/shop/members', {
      email: 'nobody@example.test',
      role: 'viewer',
    });
    expect(unknown).toEqual({
      status: 400,
      body: expect.objectContaining({
        message: 'email nobody@example.test: nobody with this email has signed in yet (they must sign in once first)',
      }),
    });
    const badRole = await people.erin.api<{ message: string }>('PUT', '/projects/shop/members', {
      email: 'dave@example.test',
      role: 'owner',
    });
    expect(badRole.status).toBe(400);
    expect(badRole.body.message).toBe('role must be one of viewer, editor, approver, admin');
    const given = await people.erin.api('PUT', '/projects/shop/members', {
      email: 'dave@example.test',
      role: 'approver',
    });
    expect(given.status).toBe(200);
    expect((await people.dave.api<WhoAmIResponse>('GET', '/projects/shop/me')).body.role).toBe('approver');
    const members = await people.erin.api<MembersResponse>('GET', '/projects/shop/members');
    const dave = members.body.members.find((m) => m.person.email === 'dave@example.test');
    expect(dave).toMatchObject({ role: 'approver', person: { name: 'Dave Doc', subject: 'dave' } });
    expect((await people.erin.api('DELETE', `/projects/shop/members/${dave?.person.id}`)).status).toBe(204);
    // Back to the role of the group.
    expect((await people.dave.api<WhoAmIResponse>('GET', '/projects/shop/me')).body.role).toBe('viewer');
  });

  it('attributes a token to the person who made it and shows when it was last used', async () => {
    const made = await people.erin.api<TokenResponse>('POST', '/projects/shop/tokens', {
      name: 'ci gate',
      scope: 'read',
    });
    expect(made.status).toBe(201);
    expect(made.body.createdBy).toMatchObject({ name: 'Erin Else', email: 'erin@example.test' });
    expect((await apiCall(backend.url, made.body.token as string, 'GET', '/projects/shop/captures')).status).toBe(200);
    const listed = await people.erin.api<TokenResponse[]>('GET', '/projects/shop/tokens');
    const token = listed.body.find((t) => t.id === made.body.id);
    expect(token?.createdBy).toMatchObject({ name: 'Erin Else' });
    expect(token?.lastUsedAt).not.toBeNull();
    const revoked = await people.erin.api('DELETE', `/projects/shop/tokens/${made.body.id}`);
    expect(revoked.status).toBe(204);
  });

  it('records who did what in the audit log, paged and filtered', async () => {
    const all = await people.dave.api<AuditPageResponse>('GET', '/projects/shop/audit?limit=100');
    expect(all.status).toBe(200);
    const actions = all.body.events.map((e) => e.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        'project.created',
        'group-roles.replaced',
        'member.set',
        'member.removed',
        'proposal.created',
        'proposal.approved',
        'project.updated',
        'token.created',
        'token.revoked',
      ]),
    );
    const approvals = await people.dave.api<AuditPageResponse>('GET', '/projects/shop/audit?action=proposal.approved');
    expect(approvals.body.events.map((e) => e.actor)).toEqual([
      {
        kind: 'person',
        id: expect.any(String),
        name: 'Alice Admin <alice@example.test>',
        email: 'alice@example.test',
        subject: 'alice',
      },
      {
        kind: 'person',
        id: expect.any(String),
        name: 'Carol Checker <carol@example.test>',
        email: 'carol@example.test',
        subject: 'carol',
      },
    ]);
    const byCarol = await people.dave.api<AuditPageResponse>('GET', '/projects/shop/audit?actor=carol%40example.test');
    expect(new Set(byCarol.body.events.map((e) => e.action))).toEqual(
      new Set(['proposal.created', 'proposal.approved']),
    );
    const byToken = await people.dave.api<AuditPageResponse>('GET', '/projects/shop/audit?action=group-roles.replaced');
    expect(byToken.body.events[0]?.actor).toMatchObject({ kind: 'token', name: 'admin', email: null, subject: null });
    // Pages: newest first, `next` continues where the page ended.
    const first = await people.dave.api<AuditPageResponse>('GET', '/projects/shop/audit?limit=3');
    const second = await people.dave.api<AuditPageResponse>(
      `GET`,
      `/projects/shop/audit?limit=3&before=${first.body.next}`,
    );
    expect([...first.body.events, ...second.body.events].map((e) => e.id)).toEqual(
      all.body.events.slice(0, 6).map((e) => e.id),
    );
    const bad = await people.dave.api<{ message: string }>('GET', '/projects/shop/audit?action=nope');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^action must be one of project.created, /);
    // Another project's log is not this one's.
    expect(
      (await backend.api<AuditPageResponse>('GET', '/projects/other/audit')).body.events.map((e) => e.action),
    ).toEqual(['project.created']);
  });
});
