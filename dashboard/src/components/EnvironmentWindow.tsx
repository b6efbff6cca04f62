import { MATRIX_KINDS, type MatrixKind } from '@spectator/shared';
import type { ReactNode } from 'react';
import { useApp } from '../hooks/app';
import { useResource } from '../hooks/resource';
import { useHashQuery } from '../hooks/route';
import { KIND_LABELS } from '../lib/versions';

/** A window a view of traffic looks back over: its id (kept in the URL) and its label. */
export interface WindowChoice {
  id: string;
  label: string;
}

/** Windows of whole days, `Last 30 days`, each by its number of days. */
export const dayWindows = (days: readonly number[]): WindowChoice[] =>
  days.map((n) => ({ id: String(n), label: `Last ${n} days` }));

/** Every environment together, where a view has it (an endpoint's consumers). */
export const ALL_ENVIRONMENTS = 'all';
export type EnvironmentChoice = MatrixKind | typeof ALL_ENVIRONMENTS;

/** Builds listed in the picker at most: the environment's newest rows of the versions matrix. */
const BUILDS_LISTED = 50;

/**
 * The environment (CI, Staging, Production; all of them where a view has it), one of its builds
 * (all by default) and the window a view of traffic covers, as one inline form: Consumers, an
 * endpoint's consumers, Usage, the runtime and version share panels. `children` come first.
 */
export function EnvironmentWindow({
  label,
  environment,
  onEnvironment,
  allEnvironments = false,
  build,
  builds,
  onBuild,
  windowId,
  windows,
  onWindow,
  children,
}: {
  /** The form's accessible name, e.g. `Consumers of`. */
  label: string;
  environment: EnvironmentChoice;
  onEnvironment: (environment: EnvironmentChoice) => void;
  /** Offer "All environments" too. */
  allEnvironments?: boolean;
  /** The build picked, null for all of them. */
  build: string | null;
  /** The environment's builds, newest first; without them (undefined) no build is offered. */
  builds?: readonly string[];
  onBuild: (build: string | null) => void;
  windowId: string;
  windows: readonly WindowChoice[];
  onWindow: (id: string) => void;
  children?: ReactNode;
}) {
  // A build named by the URL but not listed (older than the list, or not seen yet) stays pickable.
  const buildOptions = builds === undefined || build === null || builds.includes(build) ? builds : [build, ...builds];
  return (
    <form className="inline-form" aria-label={label} onSubmit={(e) => e.preventDefault()}>
      {children}
      <label>
        Environment
        <select value={environment} onChange={(e) => onEnvironment(e.target.value as EnvironmentChoice)}>
          {allEnvironments && <option value={ALL_ENVIRONMENTS}>All environments</option>}
          {MATRIX_KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {KIND_LABELS[kind]}
            </option>
          ))}
        </select>
      </label>
      {buildOptions !== undefined && environment !== ALL_ENVIRONMENTS && (
        <label>
          Build
          <select value={build ?? ''} onChange={(e) => onBuild(e.target.value === '' ? null : e.target.value)}>
            <option value="">All builds</option>
            {buildOptions.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
      )}
      <label>
        Window
        <select value={windowId} onChange={(e) => onWindow(e.target.value)}>
          {windows.map((w) => (
            <option key={w.id} value={w.id}>
              {w.label}
            </option>
          ))}
        </select>
      </label>
    </form>
  );
}

/** The names of an environment's builds (its rows in the versions matrix), newest first; none for all environments. */
function useBuilds(environment: EnvironmentChoice): readonly string[] | undefined {
  const { api, project } = useApp();
  const rows = useResource(
    () =>
      environment === ALL_ENVIRONMENTS
        ? Promise.resolve([])
        : api.versions(project, { kind: environment, limit: BUILDS_LISTED }).then((page) => page.rows),
    [api, project, environment],
  );
  return rows.state === 'ready' ? rows.data.map((row) => row.name) : undefined;
}

/** What a view's picker chose, and the picker. */
export interface PickedWindow<E extends EnvironmentChoice> {
  environment: E;
  /** The build picked, null for every build of the environment. */
  build: string | null;
  windowId: string;
  form: ReactNode;
}

interface PickerOptions {
  /** The form's accessible name. */
  label: string;
  /** The URL's query keys start with it (`runtime.` → `runtime.environment`), so two pickers on a page keep apart. */
  prefix?: string;
  environment: MatrixKind;
  windows: readonly WindowChoice[];
  /** The window's id when the URL names none. */
  window: string;
  /** Called on every change the person makes (e.g. to go back to a list's first page). */
  onChange?: () => void;
  /** Offer the environment's builds. */
  builds?: boolean;
  children?: ReactNode;
}

/**
 * The environment, build and window of a view, kept in the URL (`?environment=staging&build=s-2&window=7`,
 * `prefix` before each key), with the picker for them. A value the URL names wrongly reads as the default.
 */
export function useEnvironmentWindow(
  options: PickerOptions & { allEnvironments: true },
): PickedWindow<EnvironmentChoice>;
export function useEnvironmentWindow(options: PickerOptions): PickedWindow<MatrixKind>;
export function useEnvironmentWindow(
  options: PickerOptions & { allEnvironments?: boolean },
): PickedWindow<EnvironmentChoice> {
  const { prefix = '', windows, onChange, allEnvironments = false } = options;
  const [query, setQuery] = useHashQuery();
  const keys = { environment: `${prefix}environment`, build: `${prefix}build`, window: `${prefix}window` };
  const asked = query.get(keys.environment);
  const environment: EnvironmentChoice =
    (asked === ALL_ENVIRONMENTS && allEnvironments) || (MATRIX_KINDS as readonly (string | null)[]).includes(asked)
      ? (asked as EnvironmentChoice)
      : options.environment;
  const build = environment === ALL_ENVIRONMENTS ? null : query.get(keys.build);
  const windowId = windows.find((w) => w.id === query.get(keys.window))?.id ?? options.window;
  const builds = useBuilds(options.builds ? environment : ALL_ENVIRONMENTS);
  const change = (changes: Record<string, string | null>): void => {
    setQuery(changes);
    onChange?.();
  };
  const form = (
    <EnvironmentWindow
      label={options.label}
      environment={environment}
      allEnvironments={allEnvironments}
      // A build belongs to its environment: another environment starts with all of its builds.
      onEnvironment={(next) => change({ [keys.environment]: next, [keys.build]: null })}
      build={build}
      {...(options.builds ? { builds: builds ?? [] } : {})}
      onBuild={(next) => change({ [keys.build]: next })}
      windowId={windowId}
      windows={windows}
      onWindow={(next) => change({ [keys.window]: next })}
    >
      {options.children}
    </EnvironmentWindow>
  );
  return { environment, build, windowId, form };
}
