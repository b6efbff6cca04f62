import { Injectable } from '@nestjs/common';
import type { MatrixKind } from '@spectator/shared';
import { MatrixService, matrixPageJson } from '../evidence/matrix.service';
import type { ProjectEntity } from '../projects/project.entity';
import { RuntimeService } from '../runtime/runtime.service';

/**
 * The version matrix as people read it: evidence's cells (which version runs where) with runtime's
 * figures beside them (p95 and error rate). Composed here, above both: the runtime module keeps its
 * rows under the versions evidence names, so evidence cannot read runtime without a cycle.
 */
@Injectable()
export class MatrixPageService {
  constructor(
    private readonly matrix: MatrixService,
    private readonly runtime: RuntimeService,
  ) {}

  /** The text of a `VersionMatrixResponse` page (see `MatrixService.page`), with each row's runtime. */
  async json(project: ProjectEntity, options: { kind?: MatrixKind; limit: number; cursor?: string }): Promise<string> {
    const page = await this.matrix.page(project, options);
    const runtime = await this.runtime.cells(project.id, page.rows, page.endpoints);
    return matrixPageJson(page, { runtime });
  }
}
