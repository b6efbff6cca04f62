import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { EndpointShapes } from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';
import type { AggregatedRow } from '../captures/batch-statement';
import type { Queryable } from '../common/queryable';

/** A path hint as the API lists it. */
export interface HintRow {
  template: string;
  createdBy: string | null;
  createdAt: Date;
}

/** One folded observation row of a capture, as regrouping takes the rows it moves. */
export interface MovedRow extends Omit<AggregatedRow, 'path' | 'count' | 'first_seen' | 'last_seen'> {
  captureId: string;
  count: string;
  first_seen: Date;
  last_seen: Date;
  /** How many stored rows were folded into this one. */
  rows: number;
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
 * Endpoints of open proposals made from traffic (`extend`) of the capture `$2` (of any capture when
 * null): keyed on the paths traffic came under, so they follow a regrouping. Planned endpoints
 * (`replace`) keep the paths users wrote.
 */
const OPEN_FROM_TRAFFIC = `p.status = 'Open' AND pe.mode = 'extend' AND ($2::uuid IS NULL OR p.source_capture_id = $2)`;

/** One endpoint of an open proposal, as regrouping reads it. */
export interface ProposalEndpointRow extends Omit<EndpointShapes, 'parameters'> {
  id: string;
  parameters: EndpointShapes['parameters'] | null;
  proposalId: string;
  method: string;
  path: string;
  description: string | null;
}

/**
 * The SQL of path hints (`path_hints`) and of regrouping, raw SQL in one style. Regrouping rewrites
 * every row stored under literal paths in one transaction, so its statements take that
 * transaction's `runner`; the merged observation rows go back in through the captures' batch
 * statement (`CapturesRepository.writeBatch`), the capture is read through `CapturesRepository`
 * and evidence is read and moved through `EvidenceService` (`rowIdsOf`, `pathsLike`, `regroup`).
 *
 * What else regrouping rewrites is here, though other domains own the tables, because it is one
 * rule over all of them in one transaction and the owners have no such operation yet:
 * observations, capture summaries and the batches' touched keys (captures), open proposals' endpoints (proposals) and their creation's
 * audit entry (audit). The documented paths are read here too: the endpoints' folder imports this
 * one (for the hints), so calling it from here would be an import cycle.
 */
@Injectable()
export class PathsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Runs `work` in one transaction, committed when it resolves. */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** A project's hints, oldest first. */
  hints(projectId: string): Promise<HintRow[]> {
    return this.db.query(
      'SELECT template, created_by AS "createdBy", created_at AS "createdAt" FROM path_hints WHERE project_id = $1 ORDER BY created_at, template',
      [projectId],
    );
  }

  /** A project's hinted templates, sorted. */
  async hintTemplates(projectId: string): Promise<string[]> {
    const rows = (await this.db.query('SELECT template FROM path_hints WHERE project_id = $1 ORDER BY template', [
      projectId,
    ])) as Array<{ template: string }>;
    return rows.map((row) => row.template);
  }

  /**
   * Keeps a hint (an existing one is returned as it is) while the project has fewer than `max`.
   * @returns the hint, or null when the project already has `max` hints.
   */
  async addHint(projectId: string, template: string, createdBy: string, max: number): Promise<HintRow | null> {
    const [row] = (await this.db.query(
      `WITH counted AS (SELECT count(*) AS hints FROM path_hints WHERE project_id = $1)
       INSERT INTO path_hints (project_id, template, created_by)
       SELECT $1, $2, $3 FROM counted WHERE counted.hints < $4
       ON CONFLICT (project_id, template) DO UPDATE SET template = EXCLUDED.template
       RETURNING template, created_by AS "createdBy", created_at AS "createdAt"`,
      [projectId, template, createdBy, max],
    )) as HintRow[];
    return row ?? null;
  }

  /** Forgets a hint. @returns whether the project had it. */
  async removeHint(projectId: string, template: string): Promise<boolean> {
    const [deleted] = (await this.db.query(
      'WITH gone AS (DELETE FROM path_hints WHERE project_id = $1 AND template = $2 RETURNING 1) SELECT count(*)::int AS n FROM gone',
      [projectId, template],
    )) as Array<{ n: number }>;
    return (deleted?.n ?? 0) > 0;
  }

  /**
   * The path templates of a project's documented endpoints, sorted, each once (the same read as
   * `EndpointsRepository.documentedPaths`, which this folder cannot import: see the class comment).
   */
  async documentedPaths(projectId: string, runner: Queryable = this.db): Promise<string[]> {
    const rows = (await runner.query(
      'SELECT DISTINCT path FROM endpoints WHERE project_id = $1 AND current_version_id IS NOT NULL ORDER BY path',
      [projectId],
    )) as Array<{ path: string }>;
    return rows.map((row) => row.path);
  }

  /**
   * The paths `pattern` (a LIKE pattern) matches, other than `template`, stored in a scope: the
   * capture summaries of capture `captureId` (all the project's captures when null) and the
   * endpoints of open proposals made from that capture's traffic (`OPEN_FROM_TRAFFIC`). Each once,
   * in no order. (The evidence's are `EvidenceService.pathsLike`.)
   */
  async storedPathsLike(
    runner: Queryable,
    projectId: string,
    pattern: string,
    template: string,
    captureId: string | null,
  ): Promise<string[]> {
    const rows = (await runner.query(
      `SELECT ce.path FROM capture_endpoints ce JOIN captures c ON c.id = ce.capture_id
        WHERE c.project_id = $1 AND ($2::uuid IS NULL OR ce.capture_id = $2) AND ce.path LIKE $3 AND ce.path <> $4
       UNION
       SELECT pe.path FROM proposal_endpoints pe JOIN proposals p ON p.id = pe.proposal_id
        WHERE p.project_id = $1 AND ${OPEN_FROM_TRAFFIC} AND pe.path LIKE $3 AND pe.path <> $4`,
      [projectId, captureId, pattern, template],
    )) as Array<{ path: string }>;
    return rows.map((row) => row.path);
  }

  /**
   * Deletes a scope's observation rows under `literals` (capture `captureId`, all the project's
   * when null) and returns them folded by key without the path (see `TAKE_OBSERVATIONS`).
   */
  takeObservations(
    runner: Queryable,
    projectId: string,
    captureId: string | null,
    literals: readonly string[],
  ): Promise<MovedRow[]> {
    return runner.query(TAKE_OBSERVATIONS, [projectId, captureId, literals]);
  }

  /** Deletes a scope's capture summaries under `literals`. @returns how many were deleted. */
  async deleteSummaries(
    runner: Queryable,
    projectId: string,
    captureId: string | null,
    literals: readonly string[],
  ): Promise<number> {
    const [summaries] = (await runner.query(
      `WITH gone AS (
         DELETE FROM capture_endpoints ce USING captures c
          WHERE c.id = ce.capture_id AND c.project_id = $1 AND ($2::uuid IS NULL OR ce.capture_id = $2) AND ce.path = ANY($3::text[])
         RETURNING 1
       )
       SELECT count(*)::int AS deleted FROM gone`,
      [projectId, captureId, literals],
    )) as Array<{ deleted: number }>;
    return summaries?.deleted ?? 0;
  }

  /** Renames `literals` to `template` in the touched keys the scope's committed batches recorded. */
  async renameTouchedPaths(
    runner: Queryable,
    projectId: string,
    captureId: string | null,
    literals: readonly string[],
    template: string,
  ): Promise<void> {
    await runner.query(
      `UPDATE processed_batches b
          SET touched_paths = ARRAY(SELECT CASE WHEN t.path = ANY($3::text[]) THEN $4 ELSE t.path END FROM unnest(b.touched_paths) WITH ORDINALITY AS t(path, i) ORDER BY t.i)
        WHERE b.project_id = $1 AND ($2::uuid IS NULL OR b.capture_id = $2) AND b.touched_paths && $3::text[]`,
      [projectId, captureId, literals, template],
    );
  }

  /** Makes a committed batch's touched keys unknown, so views kept of its capture are computed again in full. */
  async forgetTouched(runner: Queryable, batchId: string): Promise<void> {
    await runner.query(
      'UPDATE processed_batches SET touched_methods = NULL, touched_paths = NULL WHERE batch_id = $1',
      [batchId],
    );
  }

  /**
   * The endpoints of open proposals made from traffic of capture `captureId` (any when null) under
   * `literals` or at `template`, locked, by proposal, method and position.
   */
  openProposalEndpoints(
    runner: Queryable,
    projectId: string,
    captureId: string | null,
    literals: readonly string[],
    template: string,
  ): Promise<ProposalEndpointRow[]> {
    return runner.query(
      `SELECT pe.id, pe.proposal_id AS "proposalId", pe.method, pe.path, pe.description, pe.request, pe.responses, pe.parameters
         FROM proposal_endpoints pe JOIN proposals p ON p.id = pe.proposal_id
        WHERE p.project_id = $1 AND ${OPEN_FROM_TRAFFIC} AND (pe.path = ANY($3::text[]) OR pe.path = $4)
        ORDER BY pe.proposal_id, pe.method, pe.position
        FOR UPDATE OF pe`,
      [projectId, captureId, literals, template],
    );
  }

  /** Deletes endpoints of proposals by id. */
  async deleteProposalEndpoints(runner: Queryable, ids: readonly string[]): Promise<void> {
    await runner.query('DELETE FROM proposal_endpoints WHERE id = ANY($1::bigint[])', [ids]);
  }

  /** Moves a proposal's endpoint to `path` with the description and shapes given. */
  async rewriteProposalEndpoint(
    runner: Queryable,
    id: string,
    path: string,
    description: string | null,
    shapes: EndpointShapes,
  ): Promise<void> {
    await runner.query(
      'UPDATE proposal_endpoints SET path = $2, description = $3, request = $4, responses = $5, parameters = $6 WHERE id = $1',
      [
        id,
        path,
        description,
        shapes.request === null ? null : JSON.stringify(shapes.request),
        JSON.stringify(shapes.responses),
        shapes.parameters === undefined ? null : JSON.stringify(shapes.parameters),
      ],
    );
  }

  /**
   * Renames `literals` to `template` in the endpoints (`METHOD path`) named by the
   * `proposal.created` audit entries of some proposals, each endpoint once, in first-named order.
   */
  async renameInCreatedAudit(
    runner: Queryable,
    projectId: string,
    proposalIds: readonly string[],
    literals: readonly string[],
    template: string,
  ): Promise<void> {
    await runner.query(
      `UPDATE audit_events a
          SET details = jsonb_set(a.details, '{endpoints}', (
                SELECT coalesce(jsonb_agg(r.e ORDER BY r.i), '[]'::jsonb)
                  FROM (SELECT CASE WHEN split_part(x.v, ' ', 2) = ANY($3::text[]) THEN split_part(x.v, ' ', 1) || ' ' || $4 ELSE x.v END AS e,
                               min(x.i) AS i
                          FROM jsonb_array_elements_text(a.details->'endpoints') WITH ORDINALITY AS x(v, i)
                         GROUP BY 1) r))
        WHERE a.project_id = $1 AND a.action = 'proposal.created' AND a.target = ANY($2::text[])
          AND jsonb_typeof(a.details->'endpoints') = 'array'`,
      [projectId, proposalIds, literals, template],
    );
  }
}
