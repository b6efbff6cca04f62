import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { DEPRECATION_LOCATIONS, type DeprecationLocation, MATRIX_KINDS, type MatrixKind } from '@spectator/shared';
import { Type } from 'class-transformer';
import { ViewPageQuery } from '../../captures/dto/captures.dto';
import { BuildQueryProperty } from '../../consumers/dto/consumers.dto';
import { IsIn, IsInt, IsOptional, IsString, Matches, MaxLength, Min, Max, MinLength } from 'class-validator';

/** `?environment=&build=&limit=&after=` of the usage view (a page: as the capture views page, by path then method). */
export class UsageQuery extends ViewPageQuery {
  @ApiProperty({ enum: MATRIX_KINDS })
  @IsIn(MATRIX_KINDS)
  environment: MatrixKind;

  @BuildQueryProperty()
  build?: string;
}

/** `?days=` of what was not seen (or still seen) in a window: 30 by default, 1 to 3650. */
export class WindowQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 3650, default: 30 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(3650)
  days?: number;
}

/** `?environment=&build=&days=` of orphans and zombies (production by default, every build). */
export class OrphansQuery extends WindowQuery {
  @ApiPropertyOptional({ enum: MATRIX_KINDS, default: 'production' })
  @IsOptional()
  @IsIn(MATRIX_KINDS)
  environment?: MatrixKind;

  @BuildQueryProperty()
  build?: string;
}

/** A deprecation mark: the endpoint (method and path) and what of it. */
export class DeprecationDto {
  @ApiProperty({ example: 'GET' })
  @IsString()
  @Matches(/^[A-Z]{1,20}$/, { message: 'method must be an HTTP method in capitals (GET, POST, …)' })
  method: string;

  @ApiProperty({ example: '/users/{userId}' })
  @IsString()
  @Matches(/^\//, { message: 'path must start with /' })
  @MaxLength(2000)
  path: string;

  @ApiProperty({ enum: DEPRECATION_LOCATIONS })
  @IsIn(DEPRECATION_LOCATIONS)
  location: DeprecationLocation;

  @ApiPropertyOptional({
    description: "the parameter or header name, or the field's JSON path; absent for the endpoint",
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(500)
  name?: string;
}
