import type { AuthConfigResponse, WhoAmIResponse } from '@spectator/shared';
import { useCallback, useEffect, useMemo, useState, type ReactNode } from 'react';
import { createApiClient } from './api/client';
import { NewCaptureNotice } from './components/NewCaptureNotice';
import { Empty } from './components/states';
import { AppContext, useApp } from './hooks/app';
import { DraftsProvider } from './hooks/drafts';
import { EventsProvider, useEventsStatus, type EventsStatus } from './hooks/events';
import { useRoute } from './hooks/route';
import { navigate, redirect, routeHref, type ProjectRoute, type Route } from './lib/routes';
import { clearSession, loadSession, saveSession, type Session } from './lib/session';
import { CapturesPage } from './pages/CapturesPage';
import { CommitPage } from './pages/CommitPage';
import { DiffPage } from './pages/DiffPage';
import { DocsPage } from './pages/DocsPage';
import { ProposalsPage } from './pages/ProposalsPage';
import { ReviewEndpointPage } from './pages/ReviewEndpointPage';
import { SettingsPage } from './pages/SettingsPage';
import { ProjectChooser, SignInPage } from './pages/SignInPage';
import { AuditPage } from './pages/AuditPage';
import { ConsumersPage, EndpointConsumersPage } from './pages/ConsumersPage';
import { UsagePage } from './pages/UsagePage';
import { VersionsPage } from './pages/VersionsPage';

/**
 * A person's session cookie, if they signed in through single sign-on: asked once per load when the
 * tab has no token session. `undefined` while asking.
 */
function useCookieSession(tokenSession: boolean): {
  person: Session | null | undefined;
  sso: AuthConfigResponse | null;
} {
  const [person, setPerson] = useState<Session | null | undefined>(tokenSession ? null : undefined);
  const [sso, setSso] = useState<AuthConfigResponse | null>(null);
  useEffect(() => {
    let current = true;
    const api = createApiClient({ token: null });
    void api
      .authConfig()
      .then((config) => current && setSso(config))
      .catch(() => undefined);
    if (!tokenSession)
      api.me().then(
        (who) =>
          current &&
          setPerson(
            who.kind === 'person'
              ? { token: null, project: null, ...(who.csrfToken ? { csrfToken: who.csrfToken } : {}) }
              : null,
          ),
        () => current && setPerson(null),
      );
    return () => {
      current = false;
    };
  }, [tokenSession]);
  return { person, sso };
}

/** The dashboard: sign-in, then the signed-in shell of one project. */
export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | null>(loadSession);
  const { person, sso } = useCookieSession(session !== null);
  const active = session ?? person ?? null;
  const chooseProject = useCallback((project: string) => navigate({ page: 'captures', project }), []);

  // `#/` and project-less links go to the Review of the session's project.
  useEffect(() => {
    if (route.page === 'home' && person !== undefined && !(active?.token === null && !active.project))
      redirect({ page: 'home' }, active?.project ? { page: 'captures', project: active.project } : { page: 'signin' });
  }, [route.page, active, person]);

  if (person === undefined) return null;
  if (route.page === 'home' && active?.token === null && !active.project)
    return <ProjectChooser session={active} onChosen={chooseProject} />;
  if (route.page === 'signin' || !active) {
    const link = route.page === 'signin' ? route : {};
    return (
      <SignInPage
        key={route.page === 'signin' ? `${route.token}:${route.project}` : 'signin'}
        {...link}
        sso={sso}
        current={active}
        onStay={() =>
          navigate(active?.project ? { page: 'captures', project: active.project } : { page: 'home' }, {
            replace: true,
          })
        }
        onSignedIn={(next) => {
          saveSession(next);
          setSession(next);
          // `replace` drops the sign-in link (and its token) from the history.
          navigate(next.project ? { page: 'captures', project: next.project } : { page: 'home' }, { replace: true });
        }}
      />
    );
  }
  if (route.page === 'home') return null;
  if (route.page === 'not-found') return <NotFound />;
  return (
    <SignedIn
      session={active}
      route={route}
      onSignOut={() => {
        clearSession();
        if (active.token !== null) {
          setSession(null);
          navigate({ page: 'signin' }, { replace: true });
          return;
        }
        // A person's session ends on the server, then at the identity provider when it offers that
        // (it sends the browser back here); the page is left so nothing of the session stays in memory.
        void createApiClient(active)
          .signOut()
          .catch(() => null)
          .then((answer) => {
            if (answer?.endSessionUrl) {
              window.location.assign(answer.endSessionUrl);
              return;
            }
            window.location.replace(routeHref({ page: 'signin' }));
            window.location.reload();
          });
      }}
    />
  );
}

function SignedIn({ session, route, onSignOut }: { session: Session; route: ProjectRoute; onSignOut: () => void }) {
  const project = route.project;
  const api = useMemo(
    () => createApiClient({ token: session.token, ...(session.csrfToken ? { csrfToken: session.csrfToken } : {}) }),
    [session.token, session.csrfToken],
  );
  const [who, setWho] = useState<WhoAmIResponse | null>(null);
  useEffect(() => {
    let current = true;
    // Without an answer (an older backend, a network error) `who` stays null: every action shows and the backend decides.
    api
      .me()
      .then((answer) => (answer.kind === 'person' ? api.meIn(project) : answer))
      .then(
        (answer) => current && setWho(answer),
        () => undefined,
      );
    return () => {
      current = false;
    };
  }, [api, project]);
  const context = useMemo(() => ({ api, project, who, signOut: onSignOut }), [api, project, who, onSignOut]);
  useEffect(() => {
    if (session.project !== project) saveSession({ ...session, project });
  }, [session, project]);

  return (
    <AppContext.Provider value={context}>
      <EventsProvider project={project} token={session.token}>
        <DraftsProvider>
          <Shell route={route}>
            <Page route={route} />
          </Shell>
          <NewCaptureNotice route={route} />
        </DraftsProvider>
      </EventsProvider>
    </AppContext.Provider>
  );
}

const SECTIONS: Array<{ label: string; route: (project: string) => Route; pages: Route['page'][] }> = [
  {
    label: 'Review',
    route: (project) => ({ page: 'captures', project }),
    pages: ['captures', 'undocumented', 'diff', 'commit'],
  },
  { label: 'Documentation', route: (project) => ({ page: 'docs', project }), pages: ['docs'] },
  { label: 'Versions', route: (project) => ({ page: 'versions', project }), pages: ['versions'] },
  { label: 'Proposals', route: (project) => ({ page: 'proposals', project }), pages: ['proposals'] },
  { label: 'Consumers', route: (project) => ({ page: 'consumers', project }), pages: ['consumers'] },
  { label: 'Usage', route: (project) => ({ page: 'usage', project }), pages: ['usage'] },
  { label: 'Audit', route: (project) => ({ page: 'audit', project }), pages: ['audit'] },
  { label: 'Settings', route: (project) => ({ page: 'settings', project }), pages: ['settings'] },
];

const LIVE_LABELS: Record<EventsStatus, string> = { open: 'live', connecting: 'connecting…', closed: 'offline' };
const LIVE_TITLES: Record<EventsStatus, string> = {
  open: 'Live updates on',
  connecting: 'Connecting for live updates',
  closed: 'Live updates lost; reconnecting (views reload when back)',
};

function Shell({ route, children }: { route: ProjectRoute; children: ReactNode }) {
  const { project, who, signOut } = useApp();
  const live = useEventsStatus();
  return (
    <div className="shell">
      <a
        className="skip-link"
        href="#main"
        onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}
      >
        Skip to content
      </a>
      <header className="topbar">
        <a className="brand" href={routeHref({ page: 'captures', project })}>
          <span className="logo" aria-hidden="true">
            ◉
          </span>{' '}
          Spectator
        </a>
        <span className="project" title="Project">
          {project}
        </span>
        <nav className="tabs" aria-label="Sections">
          {SECTIONS.map((section) => (
            <a
              key={section.label}
              href={routeHref(section.route(project))}
              aria-current={section.pages.includes(route.page) ? 'page' : undefined}
            >
              {section.label}
            </a>
          ))}
        </nav>
        <span className={`live live-${live}`} title={LIVE_TITLES[live]} role="status">
          {LIVE_LABELS[live]}
        </span>
        {who &&
          (who.kind === 'person' ? (
            <span className="whoami muted" data-testid="whoami" title={`Signed in as ${who.name}`}>
              {who.person?.name ?? who.person?.email ?? who.name}
              {who.role ? ` · ${who.role}` : ''}
            </span>
          ) : (
            <span className="whoami muted" data-testid="whoami" title={`Signed in with the token "${who.name}"`}>
              {who.scope} token
            </span>
          ))}
        <button type="button" className="link" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

function Page({ route }: { route: ProjectRoute }) {
  switch (route.page) {
    case 'captures':
      return <CapturesPage {...(route.captureId ? { captureId: route.captureId } : {})} />;
    case 'undocumented':
      return (
        <ReviewEndpointPage
          key={`${route.captureId} ${route.method} ${route.path}`}
          captureId={route.captureId}
          method={route.method}
          path={route.path}
        />
      );
    case 'diff':
      return (
        <DiffPage
          key={`${route.captureId} ${route.method} ${route.path}`}
          captureId={route.captureId}
          method={route.method}
          path={route.path}
        />
      );
    case 'commit':
      return <CommitPage key={route.captureId} captureId={route.captureId} />;
    case 'docs':
      return <DocsPage {...(route.endpointId ? { endpointId: route.endpointId } : {})} />;
    case 'versions':
      return <VersionsPage {...(route.kind ? { kind: route.kind } : {})} />;
    case 'proposals':
      return <ProposalsPage {...(route.proposalId ? { proposalId: route.proposalId } : {})} />;
    case 'settings':
      return <SettingsPage />;
    case 'audit':
      return <AuditPage />;
    case 'consumers':
      return route.endpointId ? (
        <EndpointConsumersPage key={route.endpointId} endpointId={route.endpointId} />
      ) : (
        <ConsumersPage />
      );
    case 'usage':
      return <UsagePage />;
  }
}

function NotFound() {
  return (
    <main className="page">
      <Empty title="No such page">
        <a href={routeHref({ page: 'home' })}>Go to the dashboard</a>
      </Empty>
    </main>
  );
}
