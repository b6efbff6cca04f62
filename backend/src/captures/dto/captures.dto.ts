import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { HTTP_METHODS } from '@spectator/shared';
import { IsIn, IsISO8601, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageLimitQuery } from '../../versions/page-limit.dto';

/** `?limit=` (default 20) and `?before=` of the captures list. */
export class ListCapturesQuery extends PageLimitQuery {
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
