import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { DEFAULT_CONSUMER_DAYS, MATRIX_KINDS, MAX_CONSUMER_DAYS, type MatrixKind } from '@spectator/shared';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/** `?days=` of a consumer question: the last N days. */
export class ConsumerDaysQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_CONSUMER_DAYS, default: DEFAULT_CONSUMER_DAYS })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: `days must be an integer from 1 to ${MAX_CONSUMER_DAYS}` })
  @Min(1, { message: `days must be an integer from 1 to ${MAX_CONSUMER_DAYS}` })
  @Max(MAX_CONSUMER_DAYS, { message: `days must be an integer from 1 to ${MAX_CONSUMER_DAYS}` })
  days?: number;
}

/** `build=`: one build of an environment (its row's name in the versions matrix), every build when absent. */
export const BuildQueryProperty = () =>
  applyDecorators(
    ApiPropertyOptional({
      description: 'one build of the environment (its matrix row name: the build, `PR #n` for a CI run)',
      maxLength: 200,
    }),
    IsOptional(),
    IsString({ message: 'build must be a build name' }),
    MaxLength(200, { message: 'build must be at most 200 characters' }),
  );

/** `?days=&build=`: the consumers of one build of an environment (all of them by default) in the last N days. */
export class ConsumerBuildQuery extends ConsumerDaysQuery {
  @BuildQueryProperty()
  build?: string;
}

/** `?environment=&days=&build=`: consumers of one environment (production by default), or of one of its builds. */
export class ConsumersQuery extends ConsumerBuildQuery {
  @ApiPropertyOptional({ enum: MATRIX_KINDS, default: 'production' })
  @IsOptional()
  @IsIn(MATRIX_KINDS, { message: `environment must be one of ${MATRIX_KINDS.join(', ')}` })
  environment?: MatrixKind;
}

/** `PUT /consumers/{consumer}/label`. */
export class ConsumerLabelDto {
  @ApiProperty({ description: 'what the team calls this consumer, e.g. "mobile app 5.x"', maxLength: 200 })
  @IsString()
  @MaxLength(200)
  label: string;
}
