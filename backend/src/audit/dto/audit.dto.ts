import { ApiPropertyOptional } from '@nestjs/swagger';
import { AUDIT_ACTIONS, type AuditAction } from '@spectator/shared';
import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { PageLimitQuery } from '../../common/page-limit.dto';

export class AuditQuery extends PageLimitQuery {
  @ApiPropertyOptional({ description: 'Entries older than this id (the `next` of the previous page)' })
  @IsOptional()
  @Matches(/^[1-9]\d{0,17}$/, { message: 'before must be an entry id (a positive integer)' })
  before?: string;

  @ApiPropertyOptional({ enum: AUDIT_ACTIONS })
  @IsOptional()
  @IsIn(AUDIT_ACTIONS, { message: `action must be one of ${AUDIT_ACTIONS.join(', ')}` })
  action?: AuditAction;

  @ApiPropertyOptional({ description: "An actor's id (person or token), email or provider subject" })
  @IsOptional()
  @IsString()
  @Length(1, 400)
  actor?: string;
}
