import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  bestTemplate,
  type EndpointShapes,
  hasParameter,
  MATRIX_KINDS,
  type MatrixKind,
  matchTemplate,
  pathDigest,
} from '@spectator/shared';
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { badInput, DomainError, ErrorCode } from '../common/errors';
import { extendEndpointShapes } from '../versions/endpoint-shapes';
import { withRetry } from '../common/retry';
import { EventsService } from '../events/events.service';
import { environmentRowOf } from '../evidence/environment-row';
import { EvidenceService } from '../evidence/evidence.service';
import { type AggregatedRow, WRITE_BATCH, writeBatchParameters } from '../captures/batch-statement';

/** Where a regrouping looks: one capture (and its environment row's evidence), or the whole project. */
export interface RegroupScope {
  captureId?: string;
  /**
   * With `captureId`: the digests (`pathDigest(captureId, path)`) of the literal paths to take, as
   * the agent's `learned` message names them; other paths the template covers stay as they are (a
   * sibling the agent keeps literal, `/users/me`). Without: every literal path the template covers.
   */
  covers?: ReadonlySet<string>;
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

/** One folded observation row of a capture, as the regrouping reads the rows it moves. */
interface MovedRow extends Omit<AggregatedRow, 'path' | 'count' | 'first_seen' | 'last_seen'> {
  captureId: string;
  count: string;
  first_seen: Date;
  last_seen: Date;
}

/** Unites name lists of the rows of a group (arrays of any length): with jsonpath, as array_agg cannot. */
const unitedNames = (column: string): string =>
  `(SELECT coalesce(array_agg(DISTINCT x ORDER BY x), '{}') FROM jsonb_array_elements_text(jsonb_path_query_array(jsonb_agg(to_jsonb(m.${column})), '$[*][*]')) x)`;

/**
 * Deletes a scope's observation rows under some literal paths and returns them folded by their
 * key without the path (capture, method, status, bodies): counts added, first and last seen the
 * extremes, name lists united, a note kept when any row has one.
 */
const TAKE_OBSERVATIONS = `
  WITH moved AS (
    DELETE FROM observations o USING captures c
     WHERE c.id = o.capture_id AND c.project_id = $1 AND ($2::uuid IS NULL OR o.capture_id = $2) AND o.path = ANY($3::text[])
    RETURNING o.*
  )
  SELECT m.capture_id AS "captureId", m.method, m.status,
         m.request_content_type AS req_ct, m.request_shape AS req_fp, max(m.request_note) AS req_note,
         m.response_content_type AS res_ct, m.response_shape AS res_fp, max(m.response_note) AS res_note,
         ${unitedNames('query')} AS query, ${unitedNames('request_headers')} AS req_h, ${unitedNames('response_headers')} AS res_h,
         sum(m.count)::text AS count, min(m.first_seen) AS first_seen, max(m.last_seen) AS last_seen,
         count(*)::int AS rows
    FROM moved m
   GROUP BY m.capture_id, m.method, m.status, m.request_content_type, m.request_shape, m.response_content_type, m.response_shape
   ORDER BY m.capture_id`;

/**
 * Regrouping: what was stored under literal paths (`/users/alice`, `/users/bob`) before their
 * template (`/users/{user}`) was known is merged into the template and the literal rows are
 * deleted, so no name or slug stays in the database and the counts, undocumented views, diffs and
 * evidence read as if the traffic had come in under the template (docs/paths.md, Regrouping).
 *
 * Called when an agent reports templates it learned (for its capture) and when a user states a
 * template in the dashboard (for the whole project).
 */
@Injectable()
export class RegroupService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly evidence: EvidenceService,
    private readonly events: EventsService,
  ) {}

  /**
   * Merges the project's rows stored under paths of `template` into it: observations and capture
   * summaries of the capture `scope.captureId` (all captures without it), and the evidence of that
   * capture's environment row (all rows without it). A path is left alone when it is documented
   * (documented templates always win) or when a documented template matches it more specifically
   * than `template` does (the agent would have named it so). Open proposals made from that
   * capture's traffic (all open ones without it) are rewritten to the template too. All in one transaction.
   * @returns how many literal rows were merged (observations, capture summaries, evidence rows and
   * endpoints of open proposals).
   * @throws DomainError BadInput for a malformed template, CaptureNotFound for a capture of another project.
   */
  async regroup(projectId: string, template: string, scope: RegroupScope = {}): Promise<number> {
    const canonical = canonicalTemplate(template);
    const result = await withRetry(() =>
      this.db.transaction((manager) =>
        this.regroupIn(manager, projectId, canonical, scope.captureId ?? null, scope.covers ?? null),
      ),
    );
    for (const captureId of result.captures) this.events.captureChanged(projectId, captureId);
    return result.merged;
  }

  private async regroupIn(
    manager: EntityManager,
    projectId: string,
    template: string,
    captureId: string | null,
    covers: ReadonlySet<string> | null,
  ): Promise<{ merged: number; captures: string[] }> {
    const [project] = (await manager.query('SELECT id, slug FROM projects WHERE id = $1', [projectId])) as Array<{
      id: string;
      slug: string;
    }>;
    if (!project) throw new DomainError(ErrorCode.ProjectNotFound, `project ${projectId} does not exist`);
    const rowIds = captureId === null ? null : await this.evidenceRowsOf(manager, project, captureId);
    const literals = (await this.literalsOf(manager, project.id, template, captureId, rowIds)).filter(
      (path) => covers === null || captureId === null || covers.has(pathDigest(captureId, path)),
    );
    if (literals.length === 0) return { merged: 0, captures: [] };

    const moved: Array<MovedRow & { rows: number }> = await manager.query(TAKE_OBSERVATIONS, [
      project.id,
      captureId,
      literals,
    ]);
    const [summaries] = (await manager.query(
      `WITH gone AS (
         DELETE FROM capture_endpoints ce USING captures c
          WHERE c.id = ce.capture_id AND c.project_id = $1 AND ($2::uuid IS NULL OR ce.capture_id = $2) AND ce.path = ANY($3::text[])
         RETURNING 1
       )
       SELECT count(*)::int AS deleted FROM gone`,
      [project.id, captureId, literals],
    )) as Array<{ deleted: number }>;
    // Batches recorded which endpoints they touched: those keys must not keep a name either.
    await manager.query(
      `UPDATE processed_batches b
          SET touched_paths = ARRAY(SELECT CASE WHEN t.path = ANY($3::text[]) THEN $4 ELSE t.path END FROM unnest(b.touched_paths) WITH ORDINALITY AS t(path, i) ORDER BY t.i)
        WHERE b.project_id = $1 AND ($2::uuid IS NULL OR b.capture_id = $2) AND b.touched_paths && $3::text[]`,
      [project.id, captureId, literals, template],
    );
    const byCapture = new Map<string, Array<MovedRow & { rows: number }>>();
    for (const row of moved) byCapture.set(row.captureId, [...(byCapture.get(row.captureId) ?? []), row]);
    for (const [capture, rows] of byCapture) await this.writeMerged(manager, project.id, capture, template, rows);
    const evidence = await this.evidence.regroup(manager, project, rowIds, literals, template);
    const proposals = await regroupProposals(manager, project.id, captureId, literals, template);
    const merged = moved.reduce((sum, row) => sum + row.rows, 0) + (summaries?.deleted ?? 0) + evidence + proposals;
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
      }))
      // In the order the ingest folds a batch's rows in (`aggregateObservations`): one lock order with concurrent batches.
      .sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
    const batchId = randomUUID();
    const [result] = (await manager.query(
      WRITE_BATCH,
      writeBatchParameters({ batchId, projectId, captureId, observations: folded.length, shapes: [] }, folded),
    )) as Array<{ claimed: boolean }>;
    if (!result?.claimed) throw new Error(`regrouping batch ${batchId} was not claimed`);
    // Its touched keys are made unknown: naming the literal keys would keep the names stored.
    await manager.query(
      'UPDATE processed_batches SET touched_methods = NULL, touched_paths = NULL WHERE batch_id = $1',
      [batchId],
    );
  }

  /** The evidence row of a capture's environment (none for `local`). @throws DomainError CaptureNotFound */
  private async evidenceRowsOf(
    manager: EntityManager,
    project: { id: string; slug: string },
    captureId: string,
  ): Promise<string[]> {
    const [capture] = (await manager.query(
      'SELECT environment_kind AS kind, pull_request AS "pullRequest", build, commit FROM captures WHERE id = $1 AND project_id = $2',
      [captureId, project.id],
    )) as Array<{ kind: string; pullRequest: string | null; build: string | null; commit: string | null }>;
    if (!capture)
      throw new DomainError(
        ErrorCode.CaptureNotFound,
        `capture ${captureId} does not exist in project ${project.slug}`,
      );
    if (!MATRIX_KINDS.includes(capture.kind as MatrixKind)) return [];
    const key = environmentRowOf({
      kind: capture.kind as MatrixKind,
      ...(capture.pullRequest === null ? {} : { pullRequest: capture.pullRequest }),
      ...(capture.build === null ? {} : { build: capture.build }),
      ...(capture.commit === null ? {} : { commit: capture.commit }),
    });
    if (key === null) return [];
    const rows = (await manager.query(
      'SELECT id FROM environment_rows WHERE project_id = $1 AND kind = $2 AND name = $3',
      [project.id, key.kind, key.name],
    )) as Array<{ id: string }>;
    return rows.map((row) => row.id);
  }

  /**
   * The stored paths in scope that `template` takes: paths of the template other than itself, not
   * documented, and not matched more specifically by a documented template (the agent matches the
   * most specific known template; on a tie the documented one, listed first, wins).
   */
  private async literalsOf(
    manager: EntityManager,
    projectId: string,
    template: string,
    captureId: string | null,
    rowIds: readonly string[] | null,
  ): Promise<string[]> {
    const candidates = (await manager.query(
      `SELECT ce.path FROM capture_endpoints ce JOIN captures c ON c.id = ce.capture_id
        WHERE c.project_id = $1 AND ($2::uuid IS NULL OR ce.capture_id = $2) AND ce.path LIKE $3 AND ce.path <> $4
       UNION
       SELECT eo.path FROM evidence_observations eo
        WHERE eo.project_id = $1 AND ($5::uuid[] IS NULL OR eo.row_id = ANY($5::uuid[])) AND eo.path LIKE $3 AND eo.path <> $4
       UNION
       SELECT pe.path FROM proposal_endpoints pe JOIN proposals p ON p.id = pe.proposal_id
        WHERE p.project_id = $1 AND ${OPEN_FROM_TRAFFIC} AND pe.path LIKE $3 AND pe.path <> $4`,
      [projectId, captureId, likePatternOf(template), template, rowIds],
    )) as Array<{ path: string }>;
    const paths = candidates
      .map((row) => row.path)
      .filter((path) => matchTemplate(template, path) && !routeWordTaken(template, path));
    if (paths.length === 0) return [];
    const documented = (
      (await manager.query(
        'SELECT DISTINCT path FROM endpoints WHERE project_id = $1 AND current_version_id IS NOT NULL ORDER BY path',
        [projectId],
      )) as Array<{ path: string }>
    ).map((row) => row.path);
    const known = [...documented, template];
    const protectedPaths = new Set(documented);
    return paths.filter((path) => !protectedPaths.has(path) && bestTemplate(path, known) === template).sort();
  }
}

/**
 * Would `template` take a literal of `path` that sits right after one of the path's parameters as a
 * value? The agent never learns one there (after an identifier come route words), so such a path is
 * a route of its own: `/articles/{articleId}/unpublish` is not a path of `/articles/{owner}/{article}`.
 */
function routeWordTaken(template: string, path: string): boolean {
  const wanted = template.split('/');
  const given = path.split('/');
  return given.some(
    (segment, at) =>
      at > 0 && !segment.startsWith('{') && given[at - 1]!.startsWith('{') && (wanted[at] ?? '').startsWith('{'),
  );
}

/**
 * Endpoints of open proposals made from traffic (`extend`) of the capture `$2` (of any capture when
 * null): keyed on the paths traffic came under, so they follow a regrouping. Planned endpoints
 * (`replace`) keep the paths users wrote.
 */
const OPEN_FROM_TRAFFIC = `p.status = 'Open' AND pe.mode = 'extend' AND ($2::uuid IS NULL OR p.source_capture_id = $2)`;

/** One endpoint of an open proposal, as regrouping reads it. */
interface ProposalEndpointRow extends Omit<EndpointShapes, 'parameters'> {
  id: string;
  parameters: EndpointShapes['parameters'] | null;
  proposalId: string;
  method: string;
  path: string;
  description: string | null;
}

/**
 * Rewrites the endpoints of open proposals made from traffic under `literals` to `template`: per
 * proposal and method, the literal copies (and an endpoint already at the template) become one
 * endpoint at the first one's position, their observed shapes merged as documentation extends
 * (`extendEndpointShapes`), so approving it documents the template with everything the copies
 * showed. The proposal's `proposal.created` audit entry names the template instead of the literal
 * paths (no name stays stored). Returns how many literal endpoints were rewritten.
 */
async function regroupProposals(
  manager: EntityManager,
  projectId: string,
  captureId: string | null,
  literals: readonly string[],
  template: string,
): Promise<number> {
  const rows = (await manager.query(
    `SELECT pe.id, pe.proposal_id AS "proposalId", pe.method, pe.path, pe.description, pe.request, pe.responses, pe.parameters
       FROM proposal_endpoints pe JOIN proposals p ON p.id = pe.proposal_id
      WHERE p.project_id = $1 AND ${OPEN_FROM_TRAFFIC} AND (pe.path = ANY($3::text[]) OR pe.path = $4)
      ORDER BY pe.proposal_id, pe.method, pe.position
      FOR UPDATE OF pe`,
    [projectId, captureId, literals, template],
  )) as ProposalEndpointRow[];
  const groups = new Map<string, ProposalEndpointRow[]>();
  for (const row of rows) {
    const key = `${row.proposalId} ${row.method}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  let rewritten = 0;
  const proposals = new Set<string>();
  for (const group of groups.values()) {
    const copies = group.filter((row) => row.path !== template);
    if (copies.length === 0) continue;
    rewritten += copies.length;
    proposals.add(group[0]!.proposalId);
    const [kept, ...others] = group as [ProposalEndpointRow, ...ProposalEndpointRow[]];
    const shapes = others.reduce<EndpointShapes>(
      (merged, row) => extendEndpointShapes(merged, shapesOf(row)),
      shapesOf(kept),
    );
    if (others.length > 0)
      await manager.query('DELETE FROM proposal_endpoints WHERE id = ANY($1::bigint[])', [others.map((row) => row.id)]);
    await manager.query(
      'UPDATE proposal_endpoints SET path = $2, description = $3, request = $4, responses = $5, parameters = $6 WHERE id = $1',
      [
        kept.id,
        template,
        group.find((row) => row.description !== null)?.description ?? null,
        shapes.request === null ? null : JSON.stringify(shapes.request),
        JSON.stringify(shapes.responses),
        shapes.parameters === undefined ? null : JSON.stringify(shapes.parameters),
      ],
    );
  }
  if (proposals.size > 0)
    await manager.query(
      `UPDATE audit_events a
          SET details = jsonb_set(a.details, '{endpoints}', (
                SELECT coalesce(jsonb_agg(r.e ORDER BY r.i), '[]'::jsonb)
                  FROM (SELECT CASE WHEN split_part(x.v, ' ', 2) = ANY($3::text[]) THEN split_part(x.v, ' ', 1) || ' ' || $4 ELSE x.v END AS e,
                               min(x.i) AS i
                          FROM jsonb_array_elements_text(a.details->'endpoints') WITH ORDINALITY AS x(v, i)
                         GROUP BY 1) r))
        WHERE a.project_id = $1 AND a.action = 'proposal.created' AND a.target = ANY($2::text[])
          AND jsonb_typeof(a.details->'endpoints') = 'array'`,
      [projectId, [...proposals], literals, template],
    );
  return rewritten;
}

/** The shapes of a proposal endpoint row (parameters only when it has some). */
function shapesOf(row: ProposalEndpointRow): EndpointShapes {
  return {
    request: row.request,
    responses: row.responses,
    ...(row.parameters === null || row.parameters === undefined ? {} : { parameters: row.parameters }),
  };
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
