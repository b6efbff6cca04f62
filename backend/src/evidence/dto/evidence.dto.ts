import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { MATRIX_KINDS, type MatrixKind } from '../environment-row';

/** `?kind=&limit=&cursor=` of the version matrix. */
export class MatrixQuery {
  @ApiPropertyOptional({ enum: MATRIX_KINDS, description: 'only rows of this kind' })
  @IsOptional()
  @IsIn(MATRIX_KINDS)
  kind?: MatrixKind;

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

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

