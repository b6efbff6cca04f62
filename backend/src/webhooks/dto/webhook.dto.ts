import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { WEBHOOK_FORMATS, type WebhookFormat } from '@spectator/shared';
import { IsIn, IsOptional, IsString, IsUrl, MaxLength, MinLength } from 'class-validator';
import { PageLimitQuery } from '../../common/page-limit.dto';

export class CreateWebhookDto {
  @ApiProperty({ example: 'https://ci.example.com/hooks/spectator' })
  @IsString()
  @MaxLength(2000)
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: 'url must be an http:// or https:// URL' },
  )
  url: string;

  @ApiPropertyOptional({ description: 'HMAC-SHA256 key (16 to 200 characters); generated when absent. Shown once.' })
  @IsOptional()
  @IsString()
  @MinLength(16)
  @MaxLength(200)
  secret?: string;

  @ApiPropertyOptional({
    enum: WEBHOOK_FORMATS,
    description: 'json (default): the event; slack: a Block Kit message; teams: an Adaptive Card message',
  })
  @IsOptional()
  @IsIn(WEBHOOK_FORMATS, { message: `format must be one of ${WEBHOOK_FORMATS.join(', ')}` })
  format?: WebhookFormat;
}

/** `?limit=` of a delivery log (50 by default). */
export class ListDeliveriesQuery extends PageLimitQuery {}
