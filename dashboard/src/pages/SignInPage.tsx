import type { AuthConfigResponse, ProjectResponse } from '@spectator/shared';
import { useEffect, useState, type FormEvent } from 'react';
import { ApiError, createApiClient } from '../api/client';
import { FormError } from '../components/forms';
import { NewProject } from '../components/NewProject';
import type { Session } from '../lib/session';

/**
 * Checks a token: with a project, by reading its captures (any project scope may); without one, by
 * listing projects and taking the only one. The bootstrap admin token (no project of its own) is
 * offered every project and the creation of a new one. Resolves with the session to keep.
 */
async function verify(
  token: string,
  project: string,
): Promise<{ session: Session } | { choose: ProjectResponse[]; canCreate: boolean }> {
  const api = createApiClient({ token });
  if (project) {
    await api.captures(project);
    return { session: { token, project } };
  }
  const [projects, who] = await Promise.all([api.projects(), api.me().catch(() => null)]);
  const canCreate = who?.scope === 'admin' && who.project === null;
  if (projects.length === 1 && !canCreate) return { session: { token, project: projects[0]!.slug } };
  if (projects.length === 0 && !canCreate)
    throw new ApiError(404, 'This token sees no project. Sign in with the admin token to create one.', '/projects');
  return { choose: projects, canCreate };
}

/**
 * Sign-in with a token (kept for this tab only). `#/signin?token=…&project=…` fills the form and asks
 * before signing in: a link from someone else must not switch this tab to another project unasked.
 */
export function SignInPage({
  token: linkToken,
  project: linkProject,
  sso,
  current,
  onSignedIn,
  onStay,
}: {
  token?: string;
  project?: string;
  /** How people sign in here: with single sign-on configured, its button comes first. */
  sso?: AuthConfigResponse | null;
  /** The session this tab has now, if any: a link would replace it. */
  current?: Session | null;
  onSignedIn: (session: Session) => void;
  onStay?: () => void;
}) {
  const [token, setToken] = useState(linkToken ?? '');
  const [project, setProject] = useState(linkProject ?? '');
  const [choices, setChoices] = useState<ProjectResponse[] | null>(null);
  const [canCreate, setCanCreate] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event?: FormEvent) => {
    event?.preventDefault();
    if (!token.trim()) {
      setError('Enter a token.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const result = await verify(token.trim(), project.trim());
      if ('session' in result) onSignedIn(result.session);
      else {
        setChoices(result.choose);
        setCanCreate(result.canCreate);
      }
    } catch (caught) {
      const apiError = caught instanceof ApiError ? caught : null;
      // A 403 knows the token: say why (an agent token) instead of a bare no. Another project's slug is a 404, like an unknown one.
      setError(
        apiError?.status === 401
          ? 'That token was not accepted for this project.'
          : apiError?.status === 403
            ? `That token cannot open this project: ${apiError.message}.${/scope agent\b/.test(apiError.message) ? ' An agent token only streams traffic: sign in with a read, write or admin token of the project.' : ''}`
            : apiError?.status === 404 && project.trim()
              ? `No project "${project.trim()}" for this token.`
              : (caught as Error).message,
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="signin">
      <form className="card signin-card" onSubmit={submit} aria-busy={busy}>
        <h1>
          <span className="logo" aria-hidden="true">
            ◉
          </span>{' '}
          Spectator
        </h1>
        {sso?.sso && !linkToken ? (
          <>
            <a
              className="button primary signin-sso"
              data-testid="signin-sso"
              href={`/api/v1/auth/login?returnTo=${encodeURIComponent(linkProject ? `/#/p/${encodeURIComponent(linkProject)}` : '/')}`}
            >
              Sign in with {sso.providerName}
            </a>
            <p className="muted">Or, for agents, automation and local use, with a token of your project:</p>
          </>
        ) : (
          <p className="muted">Sign in with a token of your project. It is kept for this browser tab only.</p>
        )}
        {linkToken ? (
          <p className="callout" role="status" data-testid="signin-link">
            <span>
              This link signs this tab in{' '}
              {linkProject ? (
                <>
                  to the project <strong>{linkProject}</strong>{' '}
                </>
              ) : (
                ''
              )}
              with the token it carries. Sign in only if you trust where the link came from.
              {current ? (
                <>
                  {' '}
                  You are signed in
                  {current.project ? (
                    <>
                      {' '}
                      to <strong>{current.project}</strong>
                    </>
                  ) : (
                    ''
                  )}{' '}
                  now; signing in replaces that.
                </>
              ) : null}
            </span>
          </p>
        ) : null}
        <label>
          Token
          <input
            type="password"
            autoComplete="off"
            value={token}
            onChange={(e) => setToken(e.target.value)}
            autoFocus={!linkToken}
            required
          />
        </label>
        {choices?.length === 0 ? (
          <p className="muted">No project yet: create the first one below.</p>
        ) : choices ? (
          <label>
            Project
            <select value={project} onChange={(e) => setProject(e.target.value)} required>
              <option value="">Choose a project…</option>
              {choices.map((choice) => (
                <option key={choice.id} value={choice.slug}>
                  {choice.name} ({choice.slug})
                </option>
              ))}
            </select>
          </label>
        ) : (
          <label>
            Project <span className="muted">(slug, optional)</span>
            <input value={project} onChange={(e) => setProject(e.target.value)} placeholder="e.g. demo" />
          </label>
        )}
        <FormError error={error} />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {linkToken && current && onStay ? (
          <button type="button" onClick={onStay}>
            Stay {current.project ? `in ${current.project}` : 'signed in as before'}
          </button>
        ) : null}
      </form>
      {choices && canCreate ? (
        <NewProject
          token={token.trim()}
          onCreated={(created) => onSignedIn({ token: token.trim(), project: created.slug })}
        />
      ) : null}
    </main>
  );
}

/** After single sign-on without a project in the link: the projects the person has a role in. */
export function ProjectChooser({ session, onChosen }: { session: Session; onChosen: (project: string) => void }) {
  const [projects, setProjects] = useState<ProjectResponse[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    createApiClient(session)
      .projects()
      .then(
        (list) => {
          if (!current) return;
          if (list.length === 1) onChosen(list[0]!.slug);
          else setProjects(list);
        },
        (caught: unknown) => current && setError((caught as Error).message),
      );
    return () => {
      current = false;
    };
  }, [session, onChosen]);
  return (
    <main className="signin">
      <div className="card signin-card">
        <h1>Choose a project</h1>
        <FormError error={error} />
        {projects?.length === 0 ? (
          <p className="muted" data-testid="no-projects">
            You have no role in any project yet: ask an admin to give you one (Settings → Members), or to map one of
            your groups to a role.
          </p>
        ) : (
          <ul className="plain">
            {projects?.map((project) => (
              <li key={project.id}>
                <a href={`#/p/${encodeURIComponent(project.slug)}/captures`}>
                  {project.name} ({project.slug})
                </a>
              </li>
            ))}
          </ul>
        )}
      </div>
    </main>
  );
}
