import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ENVIRONMENT_KINDS, type EnvironmentKind, type TokenScope } from '@spectator/shared';
import { ArrayMaxSize, IsArray, IsIn, IsISO8601, IsOptional, IsString, Length } from 'class-validator';

export const TOKEN_SCOPES: readonly TokenScope[] = ['agent', 'read', 'write', 'admin'];

export class CreateTokenDto {
  @ApiProperty({ example: 'staging sidecar' })
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiProperty({ enum: TOKEN_SCOPES })
  @IsIn(TOKEN_SCOPES)
  scope: TokenScope;

  @ApiPropertyOptional({
    enum: ENVIRONMENT_KINDS,
    isArray: true,
    description: 'Agent tokens only: the environment kinds it may report (default: any)',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(4)
  @IsIn(ENVIRONMENT_KINDS, { each: true })
  environments?: EnvironmentKind[];

  @ApiPropertyOptional({
    example: '2027-01-31T00:00:00Z',
    description:
      'When the token stops working on its own (ISO 8601, in the future, at most 10 years ahead); default: never',
  })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'expiresAt must be an ISO 8601 date and time, e.g. 2027-01-31T00:00:00Z' })
  expiresAt?: string;
}
