import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { DEFAULT_PRODUCTION_DAYS, MATRIX_KINDS, MAX_PRODUCTION_DAYS, type MatrixKind } from '@spectator/shared';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
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

/** `?method=&path=` and the rest of `RuntimeQuery`: the runtime of an endpoint by its route, documented or not. */
export class RouteRuntimeQuery extends RuntimeQuery {
  @ApiProperty({ description: 'HTTP method, e.g. GET' })
  @IsString({ message: 'method must be an HTTP method such as GET' })
  @Matches(/^[A-Z]{1,16}$/, { message: 'method must be an HTTP method such as GET' })
  method: string;

  @ApiProperty({ description: 'the path as stored, e.g. /orders/{orderId} or /slow' })
  @IsString({ message: 'path must start with /' })
  @Matches(/^\//, { message: 'path must start with /' })
  @MaxLength(2048)
  path: string;
}

const PRODUCTION_DAYS_MESSAGE = `productionDays must be a whole number of days from 1 to ${MAX_PRODUCTION_DAYS}`;

/** `?productionDays=` of the runtime gate: how far back production's counts go. */
export class CiRuntimeQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PRODUCTION_DAYS, default: DEFAULT_PRODUCTION_DAYS })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: PRODUCTION_DAYS_MESSAGE })
  @Min(1, { message: PRODUCTION_DAYS_MESSAGE })
  @Max(MAX_PRODUCTION_DAYS, { message: PRODUCTION_DAYS_MESSAGE })
  productionDays?: number;
}
