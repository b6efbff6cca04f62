import { Injectable } from '@nestjs/common';
import {
  bestTemplate,
  hasParameter,
  MATRIX_KINDS,
  type MatrixKind,
  matchTemplate,
  pathDigest,
  sameRoute,
} from '@spectator/shared';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { badInput, DomainError, ErrorCode } from '../common/errors';
import { withRetry } from '../common/retry';
import { EventsService } from '../events/events.service';
import { environmentRowOf } from '../evidence/environment-row';
import { RuntimeService } from '../runtime/runtime.service';
import { ConsumersService } from '../consumers/consumers.service';
import { EvidenceService } from '../evidence/evidence.service';
import { type AggregatedRow, batchPart } from '../captures/batch-statement';
import { CapturesRepository, type MovedRow } from '../captures/captures.repository';
import { ProjectsService } from '../projects/projects.service';
import { ProposalRegrouping } from '../proposals/proposal-regrouping';
import { VersionStore } from '../versions/version-store';
import { PathsRepository } from './paths.repository';

/** Where a regrouping looks: one capture (and its environment row's evidence), or the whole project. */
export interface RegroupScope {
  captureId?: string;
  /**
   * With `captureId`: the digests (`pathDigest(captureId, path)`) of the literal paths to take, as
   * the agent's `learned` message names them; other paths the template covers stay as they are (a
   * sibling the agent keeps literal, `/users/me`). Without: every literal path the template covers.
   */
  covers?: ReadonlySet<string>;
  /** Paths users stated literal (`service.yml` `paths:` entries without a parameter): never taken. */
  keep?: readonly string[];
}

/** Longest template accepted (the agent's paths are bounded alike). */
const MAX_TEMPLATE_LENGTH = 2_000;

/**
 * A template in the canonical form the agent writes paths in (a template is its own best match,
 * in canonical form), checked: it starts with `/`, holds no NUL and has at least one parameter.
 * @throws DomainError BadInput naming what is wrong.
 */
export function canonicalTemplate(template: string): string {
  if (!template.startsWith('/')) throw badInput(`template ${JSON.stringify(template.slice(0, 100))} must start with /`);
  if (template.length > MAX_TEMPLATE_LENGTH)
    throw badInput(`template is longer than ${MAX_TEMPLATE_LENGTH} characters`);
  if (template.includes('\u0000')) throw badInput('template must not contain a NUL character');
  const canonical = bestTemplate(template, [template]) ?? template;
  if (!hasParameter(canonical)) throw badInput(`template ${canonical} has no {parameter}`);
  return canonical;
}

/** A LIKE pattern every path of a canonical template matches (a parameter as `%`); `matchTemplate` decides exactly. */
function likePatternOf(canonical: string): string {
  return canonical
    .split('/')
    .map((segment) => (segment.startsWith('{') ? '%' : segment.replace(/[\\%_]/g, '\\$&')))
    .join('/');
}

/**
 * Regrouping: what was stored under literal paths (`/users/alice`, `/users/bob`) before their
 * template (`/users/{user}`) was known is merged into the template and the literal rows are
 * deleted, so no name or slug stays in the database and the counts, undocumented views, diffs and
 * evidence read as if the traffic had come in under the template (docs/paths.md, Regrouping).
 *
 * Called when an agent reports templates it learned (for its capture) and when a user states a
 * template in the dashboard (for the whole project).
 *
 * This service holds the rule (which stored paths a template takes) and the transaction; each
 * domain rewrites its own rows in it, through its repository or service: captures (observations,
 * summaries, batches' touched keys: `CapturesRepository`), evidence (`EvidenceService`), runtime
 * evidence (`RuntimeService`), open proposals and their audit entry (`ProposalRegrouping`); the
 * documented paths are read through `VersionStore`.
 */
@Injectable()
export class RegroupService {
  constructor(
    private readonly paths: PathsRepository,
    private readonly captures: CapturesRepository,
    private readonly projects: ProjectsService,
    private readonly evidence: EvidenceService,
    private readonly events: EventsService,
    private readonly runtime: RuntimeService,
    private readonly proposals: ProposalRegrouping,
    private readonly versions: VersionStore,
    private readonly consumers: ConsumersService,
  ) {}

  /**
   * Merges the project's rows stored under paths of `template` into it: observations and capture
   * summaries of the capture `scope.captureId` (all captures without it), and the evidence of that
   * capture's environment row (all rows without it). A path is left alone when it is documented
   * (documented templates always win) or when a documented template matches it more specifically
   * than `template` does (the agent would have named it so). Open proposals made from that
   * capture's traffic (all open ones without it) are rewritten to the template too. All in one transaction.
   * @returns how many literal rows were merged (observations, capture summaries, evidence rows,
   * runtime evidence rows and endpoints of open proposals).
   * @throws DomainError BadInput for a malformed template, CaptureNotFound for a capture of another project.
   */
  async regroup(projectId: string, template: string, scope: RegroupScope = {}): Promise<number> {
    const canonical = canonicalTemplate(template);
    const project = await this.projects.byId(projectId);
    const result = await withRetry(() =>
      this.paths.transaction((manager) =>
        this.regroupIn(manager, project, canonical, scope.captureId ?? null, scope.covers ?? null, scope.keep ?? []),
      ),
    );
    for (const captureId of result.captures) this.events.captureChanged(projectId, captureId);
    return result.merged;
  }

  private async regroupIn(
    manager: EntityManager,
    project: { id: string; slug: string },
    template: string,
    captureId: string | null,
    covers: ReadonlySet<string> | null,
    keep: readonly string[],
  ): Promise<{ merged: number; captures: string[] }> {
    const rowIds = captureId === null ? null : await this.evidenceRowsOf(manager, project, captureId);
    // Paths the agent names by digest are the ones it sent and now learned into the template, also a
    // value right after an identifier (`/snapshots/{snapshotId}/alice`, learned from many alike values).
    const named = covers !== null && captureId !== null;
    // A path of the template but for its parameters' names (`/{id}/trim`, sent under another name
    // before `/{name}/trim` was learned) is the same route: its rows (a 404 of its own) join it.
    const literals = (await this.literalsOf(manager, project.id, template, captureId, rowIds, named)).filter(
      (path) =>
        (covers === null ||
          captureId === null ||
          covers.has(pathDigest(captureId, path)) ||
          sameRoute(template, path)) &&
        !keep.includes(path),
    );
    if (literals.length === 0) return { merged: 0, captures: [] };

    const moved = await this.captures.takeObservations(project.id, captureId, literals, manager);
    const summaries = await this.captures.deleteSummaries(project.id, captureId, literals, manager);
    // Batches recorded which endpoints they touched: those keys must not keep a name either.
    await this.captures.renameTouchedPaths(project.id, captureId, literals, template, manager);
    const byCapture = new Map<string, MovedRow[]>();
    for (const row of moved) byCapture.set(row.captureId, [...(byCapture.get(row.captureId) ?? []), row]);
    for (const [capture, rows] of byCapture) await this.writeMerged(manager, project.id, capture, template, rows);
    const evidence = await this.evidence.regroup(manager, project, rowIds, literals, template);
    // Runtime evidence (timings per endpoint and environment row) is keyed on the path too: it moves
    // with the evidence, so no literal stays there either.
    const runtime = await this.runtime.regroup(manager, project.id, rowIds, literals, template);
    // Consumer calls are keyed on the path as well.
    const consumers = await this.consumers.regroup(manager, project.id, rowIds, literals, template);
    // Open proposals made from that traffic follow it, and their creation's audit entry too.
    const proposals = await this.proposals.regroup(manager, project.id, captureId, literals, template);
    const merged =
      moved.reduce((sum, row) => sum + row.rows, 0) + summaries + evidence + proposals + runtime + consumers;
    return { merged, captures: [...byCapture.keys()] };
  }

  /**
   * Writes one capture's moved rows under the template through the ingest's own batch statement
   * (the same upsert, summaries and view bookkeeping as traffic arriving under the template), as a
   * batch of its own whose touched endpoints are unknown, so views kept of the capture are computed
   * again in full (its keys would have to name the literal paths for a patch to drop them).
   */
  private async writeMerged(
    manager: EntityManager,
    projectId: string,
    captureId: string,
    template: string,
    rows: readonly MovedRow[],
  ): Promise<void> {
    const folded: AggregatedRow[] = rows
      .map((row) => ({
        method: row.method,
        path: template,
        status: row.status,
        req_ct: row.req_ct,
        req_fp: row.req_fp,
        req_note: row.req_note,
        res_ct: row.res_ct,
        res_fp: row.res_fp,
        res_note: row.res_note,
        query: row.query,
        req_h: row.req_h,
        res_h: row.res_h,
        count: Number(row.count),
        first_seen: row.first_seen.toISOString(),
        last_seen: row.last_seen.toISOString(),
        req_inst: row.req_inst,
        res_inst: row.res_inst,
      }))
      // In the order the ingest folds a batch's rows in (`aggregateObservations`): one lock order with concurrent batches.
      .sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
    const batchId = randomUUID();
    const { claimed } = await this.captures.writeBatch(
      batchPart({ batchId, projectId, captureId, observations: folded.length, shapes: [] }, folded),
      manager,
    );
    if (!claimed) throw new Error(`regrouping batch ${batchId} was not claimed`);
    // Its touched keys are made unknown: naming the literal keys would keep the names stored.
    await this.captures.forgetTouched(batchId, manager);
  }

  /** The evidence row of a capture's environment (none for `local`). @throws DomainError CaptureNotFound */
  private async evidenceRowsOf(
    manager: EntityManager,
    project: { id: string; slug: string },
    captureId: string,
  ): Promise<string[]> {
    const capture = await this.captures.byId(project.id, captureId, manager);
    if (!capture)
      throw new DomainError(
        ErrorCode.CaptureNotFound,
        `capture ${captureId} does not exist in project ${project.slug}`,
      );
    if (!MATRIX_KINDS.includes(capture.environmentKind as MatrixKind)) return [];
    const key = environmentRowOf({
      kind: capture.environmentKind as MatrixKind,
      ...(capture.pullRequest === null ? {} : { pullRequest: capture.pullRequest }),
      ...(capture.build === null ? {} : { build: capture.build }),
      ...(capture.commit === null ? {} : { commit: capture.commit }),
    });
    if (key === null) return [];
    return this.evidence.rowIdsOf(manager, project.id, key);
  }

  /**
   * The stored paths in scope that `template` takes: paths of the template other than itself, not
   * documented, and not matched more specifically by a documented template (the agent matches the
   * most specific known template; on a tie the documented one, listed first, wins). Unless the
   * agent `named` the paths (by digest), not a path with a literal right after a parameter where
   * the template has one (see `routeWordTaken`).
   */
  private async literalsOf(
    manager: EntityManager,
    projectId: string,
    template: string,
    captureId: string | null,
    rowIds: readonly string[] | null,
    named: boolean,
  ): Promise<string[]> {
    const pattern = likePatternOf(template);
    // Every table that stores a path in the scope: capture summaries (observations have the same
    // paths), evidence, and open proposals made from the capture's traffic.
    const candidates = new Set([
      ...(await this.captures.pathsLike(projectId, captureId, pattern, template, manager)),
      ...(await this.evidence.pathsLike(manager, projectId, rowIds, pattern, template)),
      ...(await this.proposals.pathsLike(manager, projectId, captureId, pattern, template)),
    ]);
    const paths = [...candidates].filter(
      (path) => matchTemplate(template, path) && (named || !routeWordTaken(template, path)),
    );
    if (paths.length === 0) return [];
    const documented = await this.versions.documentedPaths(projectId, manager);
    const known = [...documented, template];
    const protectedPaths = new Set(documented);
    return paths.filter((path) => !protectedPaths.has(path) && bestTemplate(path, known) === template).sort();
  }
}

/**
 * Would `template` take a literal of `path` that sits right after one of the path's parameters as a
 * value? Without the agent naming the paths, such a path is taken for a route of its own (after an
 * identifier come route words): `/articles/{articleId}/unpublish` is not a path of
 * `/articles/{owner}/{article}`. An agent that learned that position names the paths it covers.
 */
function routeWordTaken(template: string, path: string): boolean {
  const wanted = template.split('/');
  const given = path.split('/');
  return given.some(
    (segment, at) =>
      at > 0 && !segment.startsWith('{') && given[at - 1]!.startsWith('{') && (wanted[at] ?? '').startsWith('{'),
  );
}

/** A row's aggregate key as the ingest writes it (NUL never occurs in stored values; ' ' stands for none). */
function keyOf(row: AggregatedRow): string {
  return [
    row.method,
    row.path,
    row.status,
    row.req_ct ?? ' ',
    row.req_fp ?? ' ',
    row.res_ct ?? ' ',
    row.res_fp ?? ' ',
  ].join('\u0000');
}
