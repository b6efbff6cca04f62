import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { HTTP_METHODS } from '@spectator/shared';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { PageLimitQuery } from '../../common/page-limit.dto';

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

/** Items a view page holds at most. */
export const MAX_VIEW_PAGE = 100_000;

/** `?after=` of a page of a capture's view: the key the page starts after. */
export class AfterKeyQuery {
  @ApiPropertyOptional({
    example: 'GET /posts/{postId}',
    description:
      'the `method path` of the last item seen: the page starts after it (views are sorted by path, then method)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2100)
  @Matches(/^[A-Z]+ \/.*$/s, { message: 'after must be the method and path of an item, e.g. "GET /posts"' })
  after?: string;
}

/** `?limit=&after=` of the undocumented and diffs views (both optional: without them, the whole view). */
export class ViewPageQuery extends AfterKeyQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_VIEW_PAGE, description: 'items in the page at most (default: all)' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_VIEW_PAGE)
  limit?: number;
}

/** The endpoint key of a `?after=` cursor. */
export function afterKey(query: AfterKeyQuery): { method: string; path: string } | undefined {
  if (query.after === undefined) return undefined;
  const space = query.after.indexOf(' ');
  return { method: query.after.slice(0, space), path: query.after.slice(space + 1) };
}

/** `?method=&path=` of the observed view. */
export class ObservedQuery extends EndpointRefDto {}
