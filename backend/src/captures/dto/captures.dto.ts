import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT'] as const;

export class ListCapturesQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({ description: 'ISO 8601 time: only captures started before it (paging)' })
  @IsOptional()
  @IsISO8601()
  before?: string;
}

/** An endpoint named by method and path template. */
export class EndpointRefDto {
  @ApiProperty({ enum: HTTP_METHODS })
  @IsIn(HTTP_METHODS)
  method: string;

  @ApiProperty({ example: '/posts/{postId}' })
  @IsString()
  @MaxLength(2000)
  @Matches(/^\//, { message: 'path must start with /' })
  path: string;
}

/** `?method=&path=` of the observed view. */
export class ObservedQuery extends EndpointRefDto {}
