import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MATRIX_KINDS, type MatrixKind } from '@spectator/shared';

/** Which versions of the endpoints to export: current (default), one version number, or what runs in an environment. */
export class OpenApiQuery {
  @ApiPropertyOptional({
    example: '1.0',
    description: 'each endpoint at this version (endpoints without it are left out)',
  })
  @IsOptional()
  @Matches(/^(0|[1-9]\d*)\.(0|[1-9]\d*)$/, { message: 'version must be <major>.<minor>, e.g. 1.0' })
  version?: string;

  @ApiPropertyOptional({
    enum: MATRIX_KINDS,
    description: 'the versions running there now (endpoints never seen there are left out)',
  })
  @IsOptional()
  @IsIn(MATRIX_KINDS)
  environment?: MatrixKind;

  @ApiPropertyOptional({ description: 'with environment=ci: one pull request' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  pullRequest?: string;
}

/** `?approve=` of the OpenAPI import: approve the proposal at once (the importer's documentation becomes the next versions). */
export class OpenApiImportQuery {
  @ApiProperty({
    required: false,
    enum: ['true', 'false'],
    description: 'approve the proposal at once (default false: it waits for review)',
  })
  @IsOptional()
  @IsIn(['true', 'false'])
  approve?: 'true' | 'false';
}
