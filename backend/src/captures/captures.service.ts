import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import {
  type CaptureResponse,
  type ChangeResponse,
  countOfInterest,
  diffEndpoint,
  type DiffResponse,
  formatVersion,
  isIgnored,
  type ObservedEndpointResponse,
  parseIgnoreRules,
  type ShapeChange,
  toJsonSchema,
  type UndocumentedEndpointResponse,
} from '@spectator/shared';
import type { DataSource, Repository } from 'typeorm';
import { DomainError, ErrorCode } from '../common/errors';
import { LruCache } from '../common/lru-cache';
import { VersionStore } from '../endpoints/version-store';
import type { ProjectEntity } from '../projects/project.entity';
import { CaptureEntity } from './capture.entity';
import { rowConforms } from './conformance';
import { fingerprintsOf, type ObservationRow, observedEndpointShapes } from './observed-shapes';
import { ShapeStore } from './shape-store';

/** Columns of an observation row, as `ObservationRow` fields. */
const ROW_COLUMNS = `o.method, o.path, o.status,
  o.request_content_type AS "requestContentType", o.request_shape AS "requestShape",
  o.response_content_type AS "responseContentType", o.response_shape AS "responseShape"`;

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

/** A predicate "is this method + path visible" for a capture's rules in effect. */
export function visibilityOf(capture: Pick<CaptureEntity, 'rules'>): (method: string, path: string) => boolean {
  const { rules } = parseIgnoreRules(capture.rules);
  if (rules.length === 0) return () => true;
  const memo = new Map<string, boolean>();
  return (method, path) => {
    const key = `${method} ${path}`;
    let visible = memo.get(key);
    if (visible === undefined) {
      visible = !isIgnored(rules, method, path);
      memo.set(key, visible);
    }
    return visible;
  };
}

/**
 * The views of captured traffic. Ignore rules in effect for a capture are applied here, on every
 * request, so a rule added later hides traffic already captured on the next reload.
 */
@Injectable()
export class CapturesService {
  /**
   * Whether an observation row conforms to a version, by (version, status, content types,
   * fingerprints). Versions and shapes never change, so the answer never does either.
   */
  private readonly conformance = new LruCache<string, boolean>(200_000);

  constructor(
    @InjectRepository(CaptureEntity) private readonly captures: Repository<CaptureEntity>,
    @InjectDataSource() private readonly db: DataSource,
    private readonly shapes: ShapeStore,
    private readonly versions: VersionStore,
  ) {}

  /** @throws DomainError CaptureNotFound unless the capture belongs to the project. */
  async byId(project: ProjectEntity, id: string): Promise<CaptureEntity> {
    const capture = await this.captures.findOneBy({ id, projectId: project.id });
    if (!capture) throw new DomainError(ErrorCode.CaptureNotFound, `capture ${id} does not exist in project ${project.slug}`);
    return capture;
  }

  /** Captures newest first, with their counts. `before`: an ISO time to page back from. */
  async list(project: ProjectEntity, limit: number, before?: Date): Promise<CaptureResponse[]> {
    const query = this.captures
      .createQueryBuilder('c')
      .where('c.project_id = :projectId', { projectId: project.id })
      .orderBy('c.started_at', 'DESC')
      .addOrderBy('c.id', 'DESC')
      .limit(limit);
    if (before) query.andWhere('c.started_at < :before', { before });
    const rows = await query.getMany();
    return Promise.all(rows.map((capture) => this.summary(project, capture)));
  }

  /** One capture with its counts. */
  async summary(project: ProjectEntity, capture: CaptureEntity): Promise<CaptureResponse> {
    const visible = visibilityOf(capture);
    const totals: Array<{ method: string; path: string; count: number }> = await this.db.query(
      'SELECT method, path, sum(count)::float8 AS count FROM observations WHERE capture_id = $1 GROUP BY method, path',
      [capture.id],
    );
    const interactions = totals.filter((row) => visible(row.method, row.path)).reduce((sum, row) => sum + row.count, 0);
    const [undocumented, diffs] = await Promise.all([this.undocumentedOf(project, capture), this.diffsOf(project, capture)]);
    return {
      id: capture.id,
      environment: { kind: capture.environmentKind, name: capture.environmentName },
      commit: capture.commit,
      build: capture.build,
      pullRequest: capture.pullRequest,
      startedAt: capture.startedAt.toISOString(),
      endedAt: capture.endedAt?.toISOString() ?? null,
      interactions,
      undocumented: undocumented.length,
      diffs: diffs.length,
      rules: capture.rules,
    };
  }

  async undocumented(project: ProjectEntity, captureId: string): Promise<UndocumentedEndpointResponse[]> {
    return this.undocumentedOf(project, await this.byId(project, captureId));
  }

  /** Endpoints seen in a capture without committed documentation, with their count of interest. */
  async undocumentedOf(project: ProjectEntity, capture: CaptureEntity): Promise<UndocumentedEndpointResponse[]> {
    const visible = visibilityOf(capture);
    const groups: Array<{ method: string; path: string; requestContentType: string | null; responseContentType: string | null; count: number }> =
      await this.db.query(
        `SELECT o.method, o.path, o.request_content_type AS "requestContentType", o.response_content_type AS "responseContentType",
                sum(o.count)::float8 AS count
           FROM observations o
          WHERE o.capture_id = $1
            AND NOT EXISTS (SELECT 1 FROM endpoints e
                             WHERE e.project_id = $2 AND e.method = o.method AND e.path = o.path AND e.current_version_id IS NOT NULL)
          GROUP BY o.method, o.path, o.request_content_type, o.response_content_type`,
        [capture.id, project.id],
      );
    const byEndpoint = new Map<string, UndocumentedEndpointResponse>();
    for (const group of groups) {
      if (!visible(group.method, group.path)) continue;
      const key = `${group.method} ${group.path}`;
      const entry = byEndpoint.get(key) ?? { method: group.method, path: group.path, interactions: 0, count: 0 };
      entry.interactions += group.count;
      entry.count += countOfInterest({
        request: group.requestContentType === null ? null : { contentType: group.requestContentType },
        response: group.responseContentType === null ? null : { contentType: group.responseContentType },
        count: group.count,
      });
      byEndpoint.set(key, entry);
    }
    return [...byEndpoint.values()].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  }

  async diffs(project: ProjectEntity, captureId: string): Promise<DiffResponse[]> {
    return this.diffsOf(project, await this.byId(project, captureId));
  }

  /**
   * Differences between a capture's traffic and the current documentation: per documented
   * endpoint, the rows that do not conform, their interactions, and the classified changes.
   */
  async diffsOf(project: ProjectEntity, capture: CaptureEntity): Promise<DiffResponse[]> {
    const visible = visibilityOf(capture);
    const rows: Array<ObservationRow & { endpointId: string; versionId: string }> = await this.db.query(
      `SELECT e.id AS "endpointId", e.current_version_id AS "versionId", ${ROW_COLUMNS}, o.count::float8 AS count
         FROM observations o
         JOIN endpoints e ON e.project_id = $2 AND e.method = o.method AND e.path = o.path
        WHERE o.capture_id = $1 AND e.current_version_id IS NOT NULL`,
      [capture.id, project.id],
    );
    const seen = rows.filter((row) => visible(row.method, row.path));
    if (seen.length === 0) return [];
    const [versions, shapes] = await Promise.all([this.versions.load(seen.map((row) => row.versionId)), this.shapes.load(fingerprintsOf(seen))]);

    const offending = new Map<string, typeof seen>();
    for (const row of seen) {
      const version = versions.get(row.versionId);
      if (version === undefined) continue;
      const key = `${row.versionId}\u0000${row.status}\u0000${row.requestContentType}\u0000${row.requestShape}\u0000${row.responseContentType}\u0000${row.responseShape}`;
      let conforms = this.conformance.get(key);
      if (conforms === undefined) {
        conforms = rowConforms(version, row, shapes);
        this.conformance.set(key, conforms);
      }
      if (conforms) continue;
      offending.set(row.endpointId, [...(offending.get(row.endpointId) ?? []), row]);
    }
    const diffs: DiffResponse[] = [];
    for (const [endpointId, group] of offending) {
      const first = group[0];
      const version = first && versions.get(first.versionId);
      if (!first || !version) continue;
      const changes = diffEndpoint(version, observedEndpointShapes(group, shapes));
      if (changes.length === 0) continue;
      diffs.push({
        endpointId,
        method: first.method,
        path: first.path,
        version: formatVersion(version),
        interactions: group.reduce((sum, row) => sum + row.count, 0),
        breaking: changes.some((change) => change.breaking),
        changes: changes.map(toChangeResponse),
      });
    }
    return diffs.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  }

  /** The merged observed shapes of one endpoint in a capture, for review. */
  async observed(project: ProjectEntity, captureId: string, method: string, path: string): Promise<ObservedEndpointResponse> {
    const capture = await this.byId(project, captureId);
    const { rows, query, requestHeaders } = await this.endpointRows(capture, method, path);
    const shapes = await this.shapes.load(fingerprintsOf(rows));
    const observed = observedEndpointShapes(rows, shapes);
    return {
      method,
      path,
      interactions: rows.reduce((sum, row) => sum + row.count, 0),
      request: observed.request && { contentType: observed.request.contentType, shape: observed.request.shape && toJsonSchema(observed.request.shape) },
      responses: observed.responses.map((r) => ({ status: r.status, contentType: r.contentType ?? '', shape: r.shape && toJsonSchema(r.shape) })),
      query,
      requestHeaders,
    };
  }

  /**
   * The visible observation rows of one endpoint in a capture, with the query and request header
   * names seen. @throws DomainError BadInput when the endpoint was not observed (or is ignored).
   */
  async endpointRows(capture: CaptureEntity, method: string, path: string): Promise<{ rows: ObservationRow[]; query: string[]; requestHeaders: string[] }> {
    const rows: Array<ObservationRow & { query: string[]; requestHeaders: string[] }> = visibilityOf(capture)(method, path)
      ? await this.db.query(
          `SELECT ${ROW_COLUMNS}, o.count::float8 AS count, o.query, o.request_headers AS "requestHeaders"
             FROM observations o WHERE o.capture_id = $1 AND o.method = $2 AND o.path = $3`,
          [capture.id, method, path],
        )
      : [];
    if (rows.length === 0) throw new DomainError(ErrorCode.BadInput, `${method} ${path} was not observed in capture ${capture.id}`);
    const union = (lists: string[][]): string[] => [...new Set(lists.flat())].sort();
    return { rows, query: union(rows.map((row) => row.query)), requestHeaders: union(rows.map((row) => row.requestHeaders)) };
  }
}
