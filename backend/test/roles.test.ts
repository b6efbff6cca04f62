import {
  type Access,
  type AuditPageResponse,
  type MembersResponse,
  type ProjectResponse,
  type ProposalResponse,
  roleAllows,
  tokenAllows,
  type TokenResponse,
  type TokenScope,
  type WhoAmIResponse,
} from '@spectator/shared';
import { createHash } from 'node:crypto';
import { startSsoBackend, TestBrowser } from './support/oidc';
import { apiCall, sqlOn, type TestBackend } from './support';
import { eventually } from './support/evidence-helpers';
import { nestRoutes } from './support/routes';

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

/**
 * What every state-changing route needs, as decided: a new route fails the walk until it is added
 * here (viewer reads, editor documents and proposes, approver approves, admin administers).
 */
const CHANGES_NEED: Record<string, string> = {
  'POST /auth/logout': 'read',
  'POST /projects': 'admin',
  'PATCH /projects/:p': 'admin',
  'POST /projects/:p/deprecations': 'write',
  'DELETE /projects/:p/deprecations': 'write',
  'POST /projects/:p/documentation': 'write',
  'PUT /projects/:p/group-roles': 'admin',
  'PUT /projects/:p/members': 'admin',
  'DELETE /projects/:p/members/:userId': 'admin',
  'POST /projects/:p/openapi/import': 'write',
  'DELETE /projects/:p/path-hints': 'write',
  'POST /projects/:p/path-hints': 'write',
  'POST /projects/:p/proposals': 'write',
  'POST /projects/:p/proposals/:id/approve': 'approve',
  'POST /projects/:p/tokens': 'admin',
  'DELETE /projects/:p/tokens/:tokenId': 'admin',
  'POST /projects/:p/webhooks': 'admin',
  'DELETE /projects/:p/webhooks/:id': 'admin',
  'PUT /projects/:p/consumers/:consumer/label': 'write',
  'DELETE /projects/:p/consumers/:consumer/label': 'write',
};

/** Routes the walk leaves out, each for a reason: signing out ends the walker's session (sso.test covers it). */
const NOT_WALKED = new Set(['POST /auth/logout']);

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

  it('guards every route by role, scope and CSRF: a table of every route Nest registers', async () => {
    const routes = nestRoutes();
    // Every route says what it needs (the guard refuses one that does not); changes need what was decided.
    expect(routes.filter((route) => route.access === undefined).map((r) => r.handler)).toEqual([]);
    expect(
      Object.fromEntries(
        routes
          .filter((route) => route.method !== 'GET')
          .map((route) => [`${route.method} ${route.path}`, route.access]),
      ),
    ).toEqual(CHANGES_NEED);
    // Reads need a viewer, but a project's members, tokens and webhooks an admin.
    expect(
      routes
        .filter((route) => route.method === 'GET' && route.access !== 'read' && route.access !== 'public')
        .map((route) => `${route.path} ${route.access}`),
    ).toEqual([
      '/projects/:p/members admin',
      '/projects/:p/tokens admin',
      '/projects/:p/webhooks admin',
      '/projects/:p/webhooks/:id/deliveries admin',
    ]);
    const guarded = routes.filter(
      (route) => route.access !== 'public' && !NOT_WALKED.has(`${route.method} ${route.path}`),
    );
    expect(guarded.length).toBeGreaterThanOrEqual(40);
    const tokens: Record<TokenScope, string> = { read: '', write: '', admin: '', agent: '' };
    for (const scope of Object.keys(tokens) as TokenScope[])
      tokens[scope] = (
        await backend.api<TokenResponse>('POST', '/projects/shop/tokens', { name: `walk ${scope}`, scope })
      ).body.token as string;
    const wrong: unknown[] = [];
    for (const route of guarded) {
      const access = route.access as Access | 'agent';
      const inProject = route.path.startsWith('/projects/:p');
      const url = route.path
        .replace(':p', 'shop')
        .replace(':pr', '1')
        .replace(/:\w+/g, '00000000-0000-4000-8000-000000000000');
      const body = route.method === 'GET' ? undefined : {};
      const outcome = (status: number): 'refused' | 'passed' => (status === 403 ? 'refused' : 'passed');
      // People, by their role in the project (outside one: `admin` is an instance admin's).
      for (const [name, role] of Object.entries(TEST_PEOPLE)) {
        const allowed =
          access === 'agent' ? false : inProject ? roleAllows(role, access) : access !== 'admin' || name === 'alice';
        const answer = await people[name as keyof typeof people].api<{ message?: string }>(route.method, url, body);
        const expected = allowed ? 'passed' : 'refused';
        if (outcome(answer.status) !== expected)
          wrong.push({
            route: `${route.method} ${route.path}`,
            who: `${name} (${role})`,
            status: answer.status,
            expected,
          });
        else if (
          !allowed &&
          inProject &&
          access !== 'agent' &&
          !/^this needs the (editor|approver|admin) role in this project; you are /.test(answer.body.message ?? '')
        )
          wrong.push({ route: `${route.method} ${route.path}`, who: name, message: answer.body.message });
      }
      // Tokens of the project, by scope (creating projects is the bootstrap token's alone).
      for (const [scope, token] of Object.entries(tokens) as Array<[TokenScope, string]>) {
        const allowed = tokenAllows(scope, access) && !(route.method === 'POST' && route.path === '/projects');
        const answer = await apiCall(backend.url, token, route.method, url, body);
        const expected = allowed ? 'passed' : 'refused';
        if (outcome(answer.status) !== expected)
          wrong.push({
            route: `${route.method} ${route.path}`,
            who: `a ${scope} token`,
            status: answer.status,
            expected,
          });
      }
      // A cookie session's change without the CSRF header is refused whoever it is.
      if (route.method !== 'GET') {
        const forged = await people.alice.api<{ message?: string }>(route.method, url, body, { csrf: false });
        if (forged.status !== 403 || !/x-csrf-token header/.test(forged.body.message ?? ''))
          wrong.push({
            route: `${route.method} ${route.path}`,
            who: 'alice without X-CSRF-Token',
            status: forged.status,
          });
      }
    }
    expect(wrong).toEqual([]);
  });

  it('names the role a refusal needs: a viewer cannot document, an editor cannot approve', async () => {
    const document = await people.dave.api<{ message: string }>('POST', '/projects/shop/documentation', {
      captureId: '00000000-0000-4000-8000-000000000000',
      endpoints: [{ method: 'GET', path: '/x', documentBodies: true }],
    });
    expect(document).toEqual({
      status: 403,
      body: expect.objectContaining({ message: 'this needs the editor role in this project; you are viewer' }),
    });
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
    // `last_used_at` is written beside the request, not before its answer: read until it is there.
    const token = await eventually(
      async () =>
        (await people.erin.api<TokenResponse[]>('GET', '/projects/shop/tokens')).body.find(
          (t) => t.id === made.body.id,
        ),
      (listed) => listed?.lastUsedAt !== null,
    );
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
