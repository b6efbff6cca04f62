import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { MATRIX_KINDS, type MatrixKind } from '@spectator/shared';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { AfterKeyQuery } from '../../captures/dto/captures.dto';
import { PageLimitQuery } from '../../common/page-limit.dto';

/** Diffs whose origins one request looks up at most (`GET /captures/{id}/diffs/origins?limit=`). */
export const MAX_ORIGINS_PAGE = 1_000;

/** Diffs of one page of origins when `?limit=` is not given. */
export const DEFAULT_ORIGINS_PAGE = 250;

/** `?limit=&after=` of a capture's diffs' origins: the diffs' paging, at most `MAX_ORIGINS_PAGE` at once. */
export class DiffOriginsQuery extends AfterKeyQuery {
  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_ORIGINS_PAGE,
    default: DEFAULT_ORIGINS_PAGE,
    description: 'diffs in the page at most',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_ORIGINS_PAGE)
  limit?: number;
}

/** `?kind=&limit=&cursor=` of the version matrix (20 rows by default). */
export class MatrixQuery extends PageLimitQuery {
  @ApiPropertyOptional({ enum: MATRIX_KINDS, description: 'only rows of this kind' })
  @IsOptional()
  @IsIn(MATRIX_KINDS)
  kind?: MatrixKind;

  @ApiPropertyOptional({ description: 'nextCursor of the previous page' })
  @IsOptional()
  @IsUUID()
  cursor?: string;
}

/** `?environment=&pullRequest=` of the evidence view (and of the OpenAPI export). */
export class EnvironmentQuery {
  @ApiProperty({ enum: MATRIX_KINDS })
  @IsIn(MATRIX_KINDS)
  environment: MatrixKind;

  @ApiPropertyOptional({ description: 'for environment=ci: one pull request (default: the newest evidence of any)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  pullRequest?: string;
}

/** `?from=&to=&fromPullRequest=&toPullRequest=` of the comparison of two environments. */
export class CompareQuery {
  @ApiProperty({ enum: MATRIX_KINDS, description: 'the side clients run now, e.g. production' })
  @IsIn(MATRIX_KINDS)
  from: MatrixKind;

  @ApiProperty({ enum: MATRIX_KINDS, description: 'the side that would replace it, e.g. staging' })
  @IsIn(MATRIX_KINDS)
  to: MatrixKind;

  @ApiPropertyOptional({ description: 'for from=ci: one pull request (default: the newest evidence of any)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  fromPullRequest?: string;

  @ApiPropertyOptional({ description: 'for to=ci: one pull request (default: the newest evidence of any)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  toPullRequest?: string;
}
