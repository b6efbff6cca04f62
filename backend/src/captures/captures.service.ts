import { Injectable } from '@nestjs/common';
import {
  type CaptureResponse,
  type ChangeResponse,
  diffEndpoint,
  type DiffResponse,
  formatVersion,
  type ObservedEndpointResponse,
  type ShapeChange,
  toJsonSchema,
  type UndocumentedEndpointResponse,
} from '@spectator/shared';
import { DomainError, ErrorCode } from '../common/errors';
import { extendEndpointShapes, NOTHING_DOCUMENTED } from '../versions/endpoint-shapes';
import { VersionStore } from '../versions/version-store';
import type { ProjectEntity } from '../projects/project.entity';
import { type CaptureRow, CapturesRepository } from './captures.repository';
import { ConformanceCache } from './conformance';
import {
  acceptedStatus,
  fingerprintsOf,
  type ObservationRow,
  observedEndpointShapes,
  rejectedRequests,
} from './observed-shapes';
import { ShapeStore } from './shape-store';
import {
  captureNotFound,
  CaptureViews,
  type DocumentedEndpoint,
  type KeptView,
  type ViewedCapture,
  type ViewedProject,
  type ViewScope,
  visibilityOf,
} from '../views/capture-views';
import {
  type EndpointKey,
  endpointKeyText,
  sortedListUpkeep,
  type ViewList,
  type ViewUpkeep,
} from '../views/view-cache';

const MINUTE_MS = 60_000;

/** One kind of exchange wherever it is seen: its status, content types and shape fingerprints. */
export type ExchangeKey = Pick<
  ObservationRow,
  'status' | 'requestContentType' | 'requestShape' | 'responseContentType' | 'responseShape'
>;

/**
 * The exchanges a kept diff was made of (its rows that do not conform), under a symbol key:
 * `JSON.stringify` leaves it out, so the API's JSON of the view stays as it was.
 */
const OFFENDING = Symbol('offending exchanges');

/** A diff as the diffs view keeps it. */
type KeptDiff = DiffResponse & { [OFFENDING]?: readonly ExchangeKey[] };

/** The exchanges a diff of the diffs view was made of (none for a diff made elsewhere). */
export function offendingExchangesOf(diff: DiffResponse): readonly ExchangeKey[] {
  return (diff as KeptDiff)[OFFENDING] ?? [];
}

/** An observation row's exchange key. */
function exchangeKeyOf(row: ObservationRow): ExchangeKey {
  return {
    status: row.status,
    requestContentType: row.requestContentType,
    requestShape: row.requestShape,
    responseContentType: row.responseContentType,
    responseShape: row.responseShape,
  };
}

/** A change as the API writes it: shapes as JSON Schema. */
export function toChangeResponse(change: ShapeChange): ChangeResponse {
  return {
    change: change.change,
    in: change.in,
    ...(change.status === undefined ? {} : { status: change.status }),
    at: change.at,
    ...(change.documented === undefined ? {} : { documented: toJsonSchema(change.documented) }),
    ...(change.observed === undefined ? {} : { observed: toJsonSchema(change.observed) }),
    breaking: change.breaking,
  };
}

/** Interactions of a capture's visible endpoints: the total the captures list shows, and per endpoint (to patch it). */
interface InteractionTotals {
  total: number;
  byEndpoint: ReadonlyMap<string, number>;
}

/**
 * The views of captured traffic. Ignore rules in effect for a capture are applied here, on every
 * request, so a rule added later hides traffic already captured on the next reload.
 */
@Injectable()
export class CapturesService {
  /** Whether an observation row conforms to a version (never changes once known). */
  private readonly conformance = new ConformanceCache();

  /** The views of a capture, kept and patched by `CaptureViews`. */
  private readonly undocumentedView: KeptView<ViewList<UndocumentedEndpointResponse>>;
  private readonly diffsView: KeptView<ViewList<DiffResponse>>;
  private readonly interactionsView: KeptView<InteractionTotals>;

  constructor(
    private readonly repository: CapturesRepository,
    private readonly shapes: ShapeStore,
    private readonly versions: VersionStore,
    private readonly views: CaptureViews,
  ) {
    this.undocumentedView = views.keep((scope) => this.undocumentedUpkeep(scope));
    this.diffsView = views.keep((scope) => this.diffsUpkeep(scope));
    this.interactionsView = views.keep((scope) => this.interactionsUpkeep(scope));
  }

  /** @throws DomainError CaptureNotFound unless the capture belongs to the project. */
  async byId(project: ProjectEntity, id: string): Promise<CaptureRow> {
    const capture = await this.repository.byId(project.id, id);
    if (!capture) throw captureNotFound(project, id);
    return capture;
  }

  /**
   * The CI captures a pull request's gate summarises: those of the commit of its newest CI capture
   * (at most `limit`, newest first), or that capture alone when it names no commit; none without one.
   */
  async ciCapturesOf(project: ProjectEntity, pullRequest: string, limit: number): Promise<CaptureRow[]> {
    const [newest] = await this.repository.ciCaptures(project.id, pullRequest, null, 1);
    if (newest === undefined) return [];
    return newest.commit === null
      ? [newest]
      : this.repository.ciCaptures(project.id, pullRequest, newest.commit, limit);
  }

  /**
   * Where a pull request's counts of `counted` (its newest commit's CI captures) can start without
   * an older commit's: the minute the first of them started, or the minute after the last traffic
   * of any other of its captures that reached into that minute or later (runtime evidence is kept
   * per pull request and minute, not per commit, so a minute both saw would mix them).
   */
  async ciCountsSince(project: ProjectEntity, pullRequest: string, counted: readonly CaptureRow[]): Promise<Date> {
    const started = Math.min(...counted.map((c) => c.startedAt.getTime()));
    const since = new Date(started - (started % MINUTE_MS));
    const newest = new Date(Math.max(...counted.map((c) => c.startedAt.getTime())));
    const others = await this.repository.lastActivityOfOthers(
      project.id,
      pullRequest,
      counted.map((c) => c.id),
      newest,
      since,
    );
    if (others === null) return since;
    const last = others.getTime();
    return new Date(last - (last % MINUTE_MS) + MINUTE_MS);
  }

  /** Captures newest first, with their counts. `before`: an ISO time to page back from. */
  async list(project: ProjectEntity, limit: number, before?: Date): Promise<CaptureResponse[]> {
    const rows = await this.repository.list(project.id, limit, before);
    return Promise.all(rows.map((capture) => this.summary(project, capture)));
  }

  /** One capture with its counts. */
  async summary(project: ProjectEntity, capture: CaptureRow): Promise<CaptureResponse> {
    const [interactions, undocumented, diffs] = await this.views.readAll(
      [this.interactionsView, this.undocumentedView, this.diffsView] as const,
      project,
      capture.id,
    );
    return {
      id: capture.id,
      environment: { kind: capture.environmentKind, name: capture.environmentName },
      commit: capture.commit,
      build: capture.build,
      pullRequest: capture.pullRequest,
      startedAt: capture.startedAt.toISOString(),
      endedAt: capture.endedAt?.toISOString() ?? null,
      interactions: interactions.total,
      undocumented: undocumented.items.length,
      diffs: diffs.items.length,
      rules: capture.rules,
      unmatched: { requests: capture.unmatchedRequests, paths: capture.unmatchedPaths },
      overflow: { requests: capture.overflowRequests },
    };
  }

  /** Interactions of a capture's visible endpoints: all summaries read, or the changed ones again. */
  private interactionsUpkeep({ capture }: ViewScope): ViewUpkeep<InteractionTotals> {
    const read = async (only?: readonly EndpointKey[]): Promise<Map<string, number>> =>
      new Map((await this.readSummaries(capture, only)).map((row) => [endpointKeyText(row), row.interactions]));
    const totalOf = (byEndpoint: ReadonlyMap<string, number>): number =>
      [...byEndpoint.values()].reduce((sum, count) => sum + count, 0);
    return {
      compute: async () => {
        const byEndpoint = await read();
        return { total: totalOf(byEndpoint), byEndpoint };
      },
      patch: async (kept, changed) => {
        const fresh = await read(changed);
        const byEndpoint = new Map(kept.byEndpoint);
        for (const endpoint of changed) byEndpoint.delete(endpointKeyText(endpoint));
        for (const [key, count] of fresh) byEndpoint.set(key, count);
        return { total: totalOf(byEndpoint), byEndpoint };
      },
    };
  }

  /** `UndocumentedEndpointResponse[]` as JSON text: all, or a page (`ViewList.page`). */
  async undocumentedJson(
    project: ProjectEntity,
    captureId: string,
    after?: EndpointKey,
    limit?: number,
  ): Promise<string> {
    return (await this.views.read(this.undocumentedView, project, captureId)).page(after, limit);
  }

  /**
   * Endpoints seen in a capture without committed documentation, with their count of interest.
   * The result is shared with later callers: do not modify it.
   */
  async undocumentedOf(project: ProjectEntity, capture: CaptureRow): Promise<readonly UndocumentedEndpointResponse[]> {
    return (await this.views.read(this.undocumentedView, project, capture.id)).items;
  }

  /**
   * The undocumented view: in full, the capture's summaries anti-joined with the documented
   * endpoints; patched, the summaries of the changed endpoints that are not documented
   * (`splitChanged`; no anti-join: a key documented since is counted in a later documentation
   * revision, and the next read computes the view in full).
   */
  private undocumentedUpkeep({
    project,
    capture,
    splitChanged,
  }: ViewScope): ViewUpkeep<ViewList<UndocumentedEndpointResponse>> {
    return sortedListUpkeep(async (changed) =>
      changed === undefined
        ? this.readSummaries(capture, undefined, project)
        : this.readSummaries(capture, (await splitChanged(changed)).undocumented),
    );
  }

  /**
   * Summaries of a capture's visible endpoints (unsorted), as the ingest transaction keeps them
   * (one row per endpoint): all of them, or `only` those endpoints'; with `undocumentedIn`, only
   * endpoints without documentation in that project.
   */
  private async readSummaries(
    capture: ViewedCapture,
    only?: readonly EndpointKey[],
    undocumentedIn?: ViewedProject,
  ): Promise<UndocumentedEndpointResponse[]> {
    if (only?.length === 0) return [];
    const visible = visibilityOf(capture);
    const rows = await this.repository.summaries(capture.id, only, undocumentedIn?.id);
    // Sorted by the caller, not in SQL: the same order as diffs, and a sort in the query cost ~5 of its 34 ms (5,000 rows).
    return rows.filter((row) => visible(row.method, row.path));
  }

  /** `DiffResponse[]` as JSON text: all, or a page (`ViewList.page`). */
  async diffsJson(project: ProjectEntity, captureId: string, after?: EndpointKey, limit?: number): Promise<string> {
    return (await this.views.read(this.diffsView, project, captureId)).page(after, limit);
  }

  /**
   * One page of a capture's diffs (`ViewList.page`'s items), each with the exchanges it was made
   * of (`offendingExchangesOf`). Shared with later callers: do not modify them.
   */
  async diffsPage(
    project: ProjectEntity,
    captureId: string,
    after: EndpointKey | undefined,
    limit: number,
  ): Promise<readonly DiffResponse[]> {
    return (await this.views.read(this.diffsView, project, captureId)).slice(after, limit);
  }

  /**
   * Differences between a capture's traffic and the current documentation (`readDiffs`). The
   * result is shared with later callers: do not modify it.
   */
  async diffsOf(project: ProjectEntity, capture: CaptureRow): Promise<readonly DiffResponse[]> {
    return (await this.views.read(this.diffsView, project, capture.id)).items;
  }

  private diffsUpkeep({ project, capture, splitChanged }: ViewScope): ViewUpkeep<ViewList<DiffResponse>> {
    return sortedListUpkeep(async (changed) =>
      this.readDiffs(project, capture, changed === undefined ? undefined : (await splitChanged(changed)).documented),
    );
  }

  /**
   * Differences between a capture's traffic and the current documentation: per documented
   * endpoint, the rows that do not conform, their interactions, and the classified changes.
   * Only endpoints whose cached flag says they differ, or whose flag is stale (a new version, or
   * a new observation key since it was computed), have their observation rows read; stale flags
   * are written back so the next read skips them. Unsorted; of all the capture's endpoints, or of
   * `only` those.
   */
  private async readDiffs(
    project: ViewedProject,
    capture: ViewedCapture,
    only?: readonly DocumentedEndpoint[],
  ): Promise<DiffResponse[]> {
    if (only?.length === 0) return [];
    const visible = visibilityOf(capture);
    const candidates = await this.repository.diffCandidates(capture.id, project.id, only);
    const wanted = candidates.filter((row) => visible(row.method, row.path));
    if (wanted.length === 0) return [];
    const rows = await this.repository.observationRows(project.id, capture.id, wanted);
    const rowsByEndpoint = new Map<string, ObservationRow[]>();
    for (const row of rows) {
      const key = endpointKeyText(row);
      const endpointRows = rowsByEndpoint.get(key);
      if (endpointRows === undefined) rowsByEndpoint.set(key, [row]);
      else endpointRows.push(row);
    }
    const [versions, shapes] = await Promise.all([
      this.versions.load(wanted.map((row) => row.versionId)),
      this.shapes.load(fingerprintsOf(rows)),
    ]);

    const checked: Array<{ method: string; path: string; versionId: string; revision: string; differs: boolean }> = [];
    const diffs: DiffResponse[] = [];
    for (const candidate of wanted) {
      const version = versions.get(candidate.versionId);
      if (version === undefined) continue;
      const endpointRows = rowsByEndpoint.get(endpointKeyText(candidate)) ?? [];
      const offending = endpointRows.filter((row) => !this.conformance.conforms(version.id, version, row, shapes));
      if (candidate.stale)
        checked.push({
          method: candidate.method,
          path: candidate.path,
          versionId: candidate.versionId,
          revision: candidate.revision,
          differs: offending.length > 0,
        });
      if (offending.length === 0) continue;
      // The changes are read from all of the capture's traffic of the endpoint, as accepting them
      // documents it: from the offending rows alone, a field only some clients send looked
      // required (a breaking request change, "→ 2.0") while accepting made it optional (1.1).
      const observed = observedEndpointShapes(endpointRows, shapes);
      // Without an accepted exchange the traffic says nothing of the request: no "request removed".
      const changes = diffEndpoint(
        version,
        endpointRows.some((row) => acceptedStatus(row.status)) ? observed : { ...observed, request: version.request },
      );
      if (changes.length === 0) continue;
      const diff: KeptDiff = {
        endpointId: candidate.endpointId,
        method: candidate.method,
        path: candidate.path,
        version: formatVersion(version),
        interactions: offending.reduce((sum, row) => sum + row.count, 0),
        breaking: changes.some((change) => change.breaking),
        changes: changes.map(toChangeResponse),
        [OFFENDING]: offending.map(exchangeKeyOf),
      };
      diffs.push(diff);
    }
    if (checked.length > 0) await this.repository.recordChecks(capture.id, checked);
    return diffs;
  }

  /**
   * The merged observed shapes of one endpoint in a capture, for review, as documenting them for the
   * first time documents them (`extendEndpointShapes`, the one rule of `required`: presence while a
   * body never varied, four objects once it did; docs/shapes.md): review shows what a commit writes.
   */
  async observed(
    project: ProjectEntity,
    captureId: string,
    method: string,
    path: string,
  ): Promise<ObservedEndpointResponse> {
    const capture = await this.byId(project, captureId);
    const { rows, query, requestHeaders } = await this.endpointRows(capture, method, path);
    const shapes = await this.shapes.load(fingerprintsOf(rows));
    const observed = extendEndpointShapes(NOTHING_DOCUMENTED, observedEndpointShapes(rows, shapes));
    return {
      method,
      path,
      interactions: rows.reduce((sum, row) => sum + row.count, 0),
      request: observed.request && {
        contentType: observed.request.contentType,
        shape: observed.request.shape && toJsonSchema(observed.request.shape),
      },
      responses: observed.responses.map((r) => ({
        status: r.status,
        contentType: r.contentType ?? '',
        shape: r.shape && toJsonSchema(r.shape),
      })),
      rejectedRequests: rejectedRequests(rows, shapes).map((r) => ({ ...r, shape: r.shape && toJsonSchema(r.shape) })),
      query,
      requestHeaders,
    };
  }

  /**
   * The visible observation rows of one endpoint in a capture, with the query and request header
   * names seen. @throws DomainError BadInput when the endpoint was not observed (or is ignored).
   */
  async endpointRows(
    capture: CaptureRow,
    method: string,
    path: string,
  ): Promise<{ rows: ObservationRow[]; query: string[]; requestHeaders: string[] }> {
    const rows: Array<ObservationRow & { query: string[]; requestHeaders: string[] }> = visibilityOf(capture)(
      method,
      path,
    )
      ? await this.repository.endpointObservations(capture.projectId, capture.id, method, path)
      : [];
    if (rows.length === 0)
      throw new DomainError(ErrorCode.BadInput, `${method} ${path} was not observed in capture ${capture.id}`);
    const union = (lists: string[][]): string[] => [...new Set(lists.flat())].sort();
    return {
      rows,
      query: union(rows.map((row) => row.query)),
      requestHeaders: union(rows.map((row) => row.requestHeaders)),
    };
  }
}
