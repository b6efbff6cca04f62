import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MATRIX_KINDS, type MatrixKind } from '@spectator/shared';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { PageLimitQuery } from '../../common/page-limit.dto';

/** `?limit=` of the changelog: the newest versions (50 by default, at most 500). */
export class ChangelogQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;
}

/** `?environment=&limit=` of the releases of an environment (20 by default). */
export class ReleasesQuery extends PageLimitQuery {
  @ApiProperty({ enum: MATRIX_KINDS, description: 'whose builds: production, staging (or ci runs)' })
  @IsIn(MATRIX_KINDS)
  environment: MatrixKind;
}
