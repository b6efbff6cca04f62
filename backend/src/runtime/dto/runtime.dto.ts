import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MATRIX_KINDS, type MatrixKind } from '@spectator/shared';
import { IsIn, IsISO8601, IsOptional, IsString, MaxLength } from 'class-validator';
import type { RuntimeResolution } from '../runtime.repository';

const STEPS: RuntimeResolution[] = ['minute', 'hour', 'day'];

/** `?environment=&since=&step=&pullRequest=&build=` of an endpoint's runtime. */
export class RuntimeQuery {
  @ApiProperty({ enum: MATRIX_KINDS })
  @IsIn(MATRIX_KINDS, { message: `environment must be one of ${MATRIX_KINDS.join(', ')}` })
  environment: MatrixKind;

  @ApiPropertyOptional({ description: 'ISO 8601 time of the first step (default: 24 hours ago)' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'since must be an ISO 8601 time' })
  since?: string;

  @ApiPropertyOptional({ enum: STEPS, description: 'what each point covers (default: the finest that fits)' })
  @IsOptional()
  @IsIn(STEPS, { message: `step must be one of ${STEPS.join(', ')}` })
  step?: RuntimeResolution;

  @ApiPropertyOptional({ description: 'for environment=ci: one pull request (default: every run)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  pullRequest?: string;

  @ApiPropertyOptional({ description: 'one build (default: every build of the environment)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  build?: string;
}
