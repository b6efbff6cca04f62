import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  type IgnoreRule,
  ignoreWork,
  isIgnored,
  MAX_MATCHED_PATH_LENGTH,
  MAX_RULES_PROGRAM_SIZE,
  parseIgnoreRules,
} from '@spectator/shared';
import type { DataSource } from 'typeorm';
import { DomainError, ErrorCode } from '../common/errors';
import { LruCache } from '../common/lru-cache';
import {
  type ChangedEndpoints,
  type EndpointKey,
  endpointKeyText,
  KeptViews,
  type ViewBasis,
  type ViewUpkeep,
} from './view-cache';
import { type TouchedKeys, viewsRepository } from './views.repository';

/**
 * Views kept in memory per kind (undocumented, diffs, interactions), one entry per capture: enough
 * for a captures page (20 by default) and the captures being reviewed. An entry holds one list of
 * a capture's endpoints and its JSON text (about 1 MB for 5,000 undocumented endpoints).
 */
const CACHED_VIEWS_PER_KIND = 32;

/**
 * Above this many changed endpoints a kept view is computed in full rather than patched: reading
 * that many summaries by key costs about what reading all of a large capture's does.
 */
const MAX_PATCHED_ENDPOINTS = 2_000;

/** The project a view belongs to. */
export interface ViewedProject {
  id: string;
  slug: string;
}

/** What the views read of a capture: its id and the ignore rules in effect. */
export interface ViewedCapture {
  id: string;
  rules: string[];
}

/** A documented endpoint: its key, id and current version. */
export interface DocumentedEndpoint extends EndpointKey {
  endpointId: string;
  versionId: string;
}

/**
 * What a view definition is given to compute a capture's view in full or to patch a kept one: the
 * project, the capture, and the changed endpoints split by documentation.
 */
export interface ViewScope {
  project: ViewedProject;
  capture: ViewedCapture;
  /**
   * The visible changed endpoints of a patch, documented or not at the basis's documentation
   * revision or later: a view of documented endpoints reads the documented ones again, a view of
   * undocumented ones the others. The rest leave a view (or stay out of it): documentation only
   * changes with the revision, and a view kept at another revision is computed in full.
   */
  splitChanged(
    changed: readonly EndpointKey[],
  ): Promise<{ documented: DocumentedEndpoint[]; undocumented: EndpointKey[] }>;
}

/**
 * A view of a capture: how to compute it in full and how to patch it from the endpoints that
 * changed (`sortedListUpkeep` for a list of endpoints). Adding a field to a view is a change to its
 * definition's query alone; keeping, snapshots and patching are `CaptureViews`'.
 */
export type ViewDefinition<T> = (scope: ViewScope) => ViewUpkeep<T>;

/** A view kept by `CaptureViews` (from `keep`). */
export interface KeptView<T> {
  readonly definition: ViewDefinition<T>;
  readonly kept: KeptViews<T>;
}

/**
 * The changed endpoints of one entry of VIEW_INPUTS' `changes` (views.repository.ts): each once,
 * in byte order (the order of the summaries' primary key, near enough, so reading them walks the
 * index in order); null when unknown or more than MAX_PATCHED_ENDPOINTS.
 */
function changedEndpoints(change: TouchedKeys | undefined): ChangedEndpoints {
  if (change === undefined || change.unknown) return null;
  const methods = change.methods ?? [];
  const paths = change.paths ?? [];
  const byKey = new Map<string, EndpointKey>();
  methods.forEach((method, i) => {
    const path = paths[i] as string;
    byKey.set(endpointKeyText({ method, path }), { method, path });
  });
  if (byKey.size > MAX_PATCHED_ENDPOINTS) return null;
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, endpoint]) => endpoint);
}

/** The inputs of a capture's views now, and per kept view asked about what changed since its basis. */
interface ViewInputs {
  capture: ViewedCapture;
  basis: ViewBasis;
  changed: ChangedEndpoints[];
}

/** A project's documented endpoints (by `endpointKeyText`) at a documentation revision. */
interface DocumentedEndpoints {
  revision: string;
  byKey: ReadonlyMap<string, DocumentedEndpoint>;
}

/** The answer for a capture that is not the project's. */
export function captureNotFound(project: ViewedProject, captureId: string): DomainError {
  return new DomainError(ErrorCode.CaptureNotFound, `capture ${captureId} does not exist in project ${project.slug}`);
}

/**
 * Engine work (RE2 steps, as `ignoreWork` counts them) spent at most testing one rules list on one
 * capture's templates, over all its views: as much as 32 requests at the list limit cost the agent
 * (32 × 2,500 × 2,048 ≈ 1.6 × 10^8 steps, about 5 s at the shared bench's worst rate). A hostile
 * list on 20,000 templates of 2,048 characters was about 55 min of the event loop for one view.
 * A template left untested when it is spent is shown, as a path longer than rules test is.
 */
export const MAX_RULES_WORK_PER_CAPTURE = 32 * MAX_RULES_PROGRAM_SIZE * MAX_MATCHED_PATH_LENGTH;

/** Decisions remembered per capture and rules list, at most: more are tested (within the budget) each time. */
const MAX_REMEMBERED_DECISIONS = 50_000;

/** Above this length a path is remembered by its digest, so that memory stays bounded per decision. */
const MAX_KEYED_PATH_LENGTH = 128;

/** What one rules list decided on one capture's templates so far, and the work it has left. */
interface RulesDecisions {
  rules: IgnoreRule[];
  workLeft: number;
  /** Per `decisionKey`, whether the template is visible. */
  visible: Map<string, boolean>;
}

/** Per capture and rules list (`${capture id} ${digest of the list}`), as many as views are kept for. */
const decisions = new LruCache<string, RulesDecisions>(CACHED_VIEWS_PER_KIND);

const digest = (text: string): string => createHash('sha256').update(text).digest('base64');

function decisionKey(method: string, path: string): string {
  return `${method} ${path.length > MAX_KEYED_PATH_LENGTH ? `#${digest(path)}` : path}`;
}

/**
 * A predicate "is this method + path visible" for a capture's rules in effect. Each template is
 * tested once per capture and rules list, across views and their computations, and the tests of
 * one list on one capture take at most MAX_RULES_WORK_PER_CAPTURE steps together: past it, a
 * template not tested yet is shown (docs/ignore-rules.md, "Matching stays fast").
 */
export function visibilityOf(capture: Pick<ViewedCapture, 'id' | 'rules'>): (method: string, path: string) => boolean {
  if (capture.rules.length === 0) return () => true;
  const key = `${capture.id} ${digest(JSON.stringify(capture.rules))}`;
  let decided = decisions.get(key);
  if (decided === undefined) {
    decided = {
      rules: parseIgnoreRules(capture.rules).rules,
      workLeft: MAX_RULES_WORK_PER_CAPTURE,
      visible: new Map(),
    };
    decisions.set(key, decided);
  }
  const { rules, visible } = decided;
  if (rules.length === 0) return () => true;
  return (method, path) => {
    const templateKey = decisionKey(method, path);
    const known = visible.get(templateKey);
    if (known !== undefined) return known;
    const work = ignoreWork(rules, method, path);
    if (work === 0) return true; // no rule applies, or the path is longer than rules test
    if (work > decided.workLeft) return true;
    decided.workLeft -= work;
    const shown = !isIgnored(rules, method, path);
    if (visible.size < MAX_REMEMBERED_DECISIONS) visible.set(templateKey, shown);
    return shown;
  };
}

/** The tuple of views' values for a tuple of kept views. */
type ValuesOf<T extends readonly unknown[]> = { [K in keyof T]: T[K] };

/**
 * Keeps capture views up to date (docs/backend.md, "Views"): each view is kept per capture with
 * the basis it was read at (the snapshot, the documentation revision, the rules), and the next
 * read of it computes it in full or patches the endpoints the batches committed since touched.
 */
@Injectable()
export class CaptureViews {
  /** Per project, its documented endpoints at a documentation revision (`documentedAt`). */
  private readonly documented = new LruCache<string, DocumentedEndpoints>(CACHED_VIEWS_PER_KIND);

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** A view to keep, defined by how it is computed and patched. */
  keep<T>(definition: ViewDefinition<T>): KeptView<T> {
    return { definition, kept: new KeptViews<T>(CACHED_VIEWS_PER_KIND) };
  }

  /** One view of a capture, up to date. @throws DomainError CaptureNotFound unless it is the project's. */
  async read<T>(view: KeptView<T>, project: ViewedProject, captureId: string): Promise<T> {
    const [value] = await this.readAll([view] as const, project, captureId);
    return value;
  }

  /**
   * Several views of a capture, up to date, from one read of their inputs.
   * @throws DomainError CaptureNotFound unless the capture belongs to the project.
   */
  async readAll<T extends readonly unknown[]>(
    views: { readonly [K in keyof T]: KeptView<T[K]> },
    project: ViewedProject,
    captureId: string,
  ): Promise<ValuesOf<T>> {
    const key = `${project.id} ${captureId}`;
    const list = views as ReadonlyArray<KeptView<unknown>>;
    const since = list.map((view) => view.kept.basisOf(key));
    const inputs = await this.readInputs(project, captureId, since);
    const scope: ViewScope = {
      project,
      capture: inputs.capture,
      splitChanged: (changed) => this.splitChanged(project, inputs, changed),
    };
    return (await Promise.all(
      list.map((view, i) =>
        view.kept.get(key, since[i], inputs.basis, inputs.changed[i] ?? null, view.definition(scope)),
      ),
    )) as unknown as ValuesOf<T>;
  }

  /**
   * What a capture's views depend on, read in one statement (VIEW_INPUTS) before the views' own
   * queries, and for each kept view's basis in `since` what changed since.
   * @throws DomainError CaptureNotFound unless the capture belongs to the project.
   */
  private async readInputs(
    project: ViewedProject,
    captureId: string,
    since: ReadonlyArray<ViewBasis | undefined>,
  ): Promise<ViewInputs> {
    const row = await viewsRepository.viewInputs(
      this.db,
      captureId,
      project.id,
      since.map((basis) => basis?.snapshot ?? null),
    );
    if (!row) throw captureNotFound(project, captureId);
    return {
      capture: { id: captureId, rules: row.rules },
      basis: {
        snapshot: row.snapshot,
        takenAt: row.takenAt,
        documentation: row.documentation,
        rules: JSON.stringify(row.rules),
      },
      changed: since.map((_, i) => changedEndpoints(row.changes?.[i])),
    };
  }

  /**
   * The documented endpoints of a project at documentation revision `revision` or later (kept per
   * project, read again when a later revision is asked for), by `endpointKeyText`.
   */
  private async documentedAt(project: ViewedProject, revision: string): Promise<DocumentedEndpoints> {
    const kept = this.documented.get(project.id);
    if (kept !== undefined && BigInt(kept.revision) >= BigInt(revision)) return kept;
    // One statement: the revision and the endpoints it counts come from one snapshot.
    const rows = await viewsRepository.documentedEndpoints(this.db, project.id);
    const documented: DocumentedEndpoints = {
      revision: rows[0]?.revision ?? revision,
      byKey: new Map(
        rows.flatMap((row) =>
          row.endpointId === null
            ? []
            : [
                [
                  endpointKeyText(row),
                  { method: row.method, path: row.path, endpointId: row.endpointId, versionId: row.versionId },
                ] as const,
              ],
        ),
      ),
    };
    this.documented.set(project.id, documented);
    return documented;
  }

  /** See `ViewScope.splitChanged`. */
  private async splitChanged(
    project: ViewedProject,
    inputs: ViewInputs,
    changed: readonly EndpointKey[],
  ): Promise<{ documented: DocumentedEndpoint[]; undocumented: EndpointKey[] }> {
    const visible = visibilityOf(inputs.capture);
    const { byKey } = await this.documentedAt(project, inputs.basis.documentation);
    const split = { documented: [] as DocumentedEndpoint[], undocumented: [] as EndpointKey[] };
    for (const endpoint of changed) {
      if (!visible(endpoint.method, endpoint.path)) continue;
      const documented = byKey.get(endpointKeyText(endpoint));
      if (documented === undefined) split.undocumented.push(endpoint);
      else split.documented.push(documented);
    }
    return split;
  }
}
