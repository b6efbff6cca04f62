import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { MATRIX_KINDS, type MatrixKind } from '@spectator/shared';
import { IsIn, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { PageLimitQuery } from '../../common/page-limit.dto';

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
