import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** A template an agent matches a project's paths against: a path hint, or a documented endpoint's path. */
export interface KnownTemplate {
  template: string;
  documented: boolean;
}

/** A template an agent learned for a capture, with the digests of the paths it covers (null: every path). */
export interface LearnedTemplateRow {
  template: string;
  covers: string[] | null;
}

/**
 * The SQL ingest runs itself, raw SQL in one style: committed batch ids (`processed_batches`), the
 * templates agents learned per capture (`capture_learned_templates`), and one read of other
 * domains' tables that the hot path needs in one round trip. Agents, captures, shapes and the batch
 * statement are reached through their domains (`AgentsService`, `CapturesRepository`).
 */
@Injectable()
export class IngestRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Deletes up to `limit` committed batch ids older than `days` days. @returns how many were deleted. */
  async pruneBatchIds(days: number, limit: number): Promise<number> {
    const [result] = (await this.db.query(
      `WITH pruned AS (
         DELETE FROM processed_batches
          WHERE batch_id IN (SELECT batch_id FROM processed_batches WHERE committed_at < now() - make_interval(days => $1) LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS deleted FROM pruned`,
      [days, limit],
    )) as Array<{ deleted: number }>;
    return result?.deleted ?? 0;
  }

  /**
   * Sets to NULL ("unknown") the touched keys of up to `limit` batch ids committed between
   * `olderThan + lookback` and `olderThan` seconds ago (a range the BRIN index on `committed_at`
   * finds without reading the rest). @returns how many were changed.
   */
  async forgetTouchedKeys(olderThan: number, lookback: number, limit: number): Promise<number> {
    const [result] = (await this.db.query(
      `WITH forgotten AS (
         UPDATE processed_batches SET touched_methods = NULL, touched_paths = NULL
          WHERE ctid = ANY (ARRAY(
            SELECT ctid FROM processed_batches
             WHERE committed_at >= now() - make_interval(secs => $1::float8 + $2::float8) AND committed_at < now() - make_interval(secs => $1::float8)
               AND touched_methods IS NOT NULL
             LIMIT $3))
            AND touched_methods IS NOT NULL
         RETURNING 1)
       SELECT count(*)::int AS forgotten FROM forgotten`,
      [olderThan, lookback, limit],
    )) as Array<{ forgotten: number }>;
    return result?.forgotten ?? 0;
  }

  /** The templates an agent learned for a capture, in no order, each with the path digests it covers (null: all). */
  learnedTemplates(captureId: string): Promise<LearnedTemplateRow[]> {
    return this.db.query('SELECT template, covers FROM capture_learned_templates WHERE capture_id = $1', [captureId]);
  }

  /** Keeps templates learned for a capture, each with what it covers (replacing what a kept one covered). */
  async keepLearnedTemplates(
    projectId: string,
    captureId: string,
    templates: readonly LearnedTemplateRow[],
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO capture_learned_templates (project_id, capture_id, template, covers)
       SELECT $1, $2, x.template, x.covers FROM jsonb_to_recordset($3::jsonb) AS x(template text, covers text[])
       ON CONFLICT (capture_id, template, project_id) DO UPDATE SET covers = EXCLUDED.covers`,
      [projectId, captureId, JSON.stringify(templates)],
    );
  }

  /**
   * A project's path hints and, when it has any, its documented paths: what a batch's literal
   * paths are matched against (read at most once a second per project and replica, see
   * `KNOWN_TEMPLATES_MS`). One statement, so it reads the paths' and the endpoints' tables itself:
   * through `PathHintsService` and `EndpointsService` it would be two round trips, and the
   * documented paths would be read even for a project without hints.
   */
  knownTemplates(projectId: string): Promise<KnownTemplate[]> {
    return this.db.query(
      `SELECT template, false AS documented FROM path_hints WHERE project_id = $1
       UNION ALL
       SELECT DISTINCT path, true FROM endpoints
        WHERE project_id = $1 AND current_version_id IS NOT NULL AND EXISTS (SELECT 1 FROM path_hints WHERE project_id = $1)`,
      [projectId],
    );
  }
}
