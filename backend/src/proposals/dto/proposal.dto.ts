import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { EndpointRefDto } from '../../captures/dto/captures.dto';
import { PageLimitQuery } from '../../common/page-limit.dto';

/** A planned body: a media type and a JSON Schema (2020-12, the subset Spectator writes). */
export class PlannedBodyDto {
  @ApiProperty({ example: 'application/json' })
  @IsString()
  @MaxLength(200)
  contentType: string;

  @ApiPropertyOptional({ description: 'JSON Schema of the body; absent for a body whose shape is not documented' })
  @IsOptional()
  @IsObject()
  schema?: Record<string, unknown>;
}

/** A planned response: a status code and its body, if it has one. */
export class PlannedResponseDto {
  @ApiProperty({ example: 200 })
  @IsInt()
  @Min(100)
  @Max(599)
  status: number;

  @ApiPropertyOptional({ example: 'application/json', description: 'absent for a response without a body (e.g. 204)' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  contentType?: string;

  @ApiPropertyOptional({ description: 'JSON Schema of the body; absent for a body whose shape is not documented' })
  @IsOptional()
  @IsObject()
  schema?: Record<string, unknown>;
}

/** A planned query parameter or request header: its name and whether every request must send it. */
export class PlannedParameterDto {
  @ApiProperty({ example: 'limit' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  @ApiProperty()
  @IsBoolean()
  required: boolean;
}

/** Planned query parameters and request headers (design first); an absent list documents none. */
export class PlannedParametersDto {
  @ApiPropertyOptional({ type: [PlannedParameterDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(200)
  @ValidateNested({ each: true })
  @Type(() => PlannedParameterDto)
  query?: PlannedParameterDto[];

  @ApiPropertyOptional({
    type: [PlannedParameterDto],
    description: 'header names in any letter case; standard headers (host, accept, authorization, …) are refused',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(200)
  @ValidateNested({ each: true })
  @Type(() => PlannedParameterDto)
  headers?: PlannedParameterDto[];
}

/**
 * An endpoint a proposal affects; request/responses/parameters only for planned shapes (design
 * first); `remove` for a documented endpoint the proposal removes.
 */
export class ProposalEndpointDto extends EndpointRefDto {
  @ApiPropertyOptional({
    description:
      'true: remove this documented endpoint (approval writes its next major version, marked removed); every endpoint of a removal proposal has it, and none gives shapes',
  })
  @IsOptional()
  @IsBoolean()
  remove?: boolean;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(10_000)
  description?: string;

  @ApiPropertyOptional({ type: PlannedBodyDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => PlannedBodyDto)
  request?: PlannedBodyDto;

  @ApiPropertyOptional({ type: [PlannedResponseDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @ValidateNested({ each: true })
  @Type(() => PlannedResponseDto)
  responses?: PlannedResponseDto[];

  @ApiPropertyOptional({
    type: PlannedParametersDto,
    description: 'absent: the parameters are not documented (never compared with traffic)',
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => PlannedParametersDto)
  parameters?: PlannedParametersDto;
}

/**
 * A new proposal: with `captureId`, the endpoints' observed traffic in that capture (undocumented
 * endpoints or diffs to accept); without it, planned shapes given per endpoint.
 */
export class CreateProposalDto {
  @ApiProperty()
  @IsString()
  @MaxLength(500)
  title: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(20_000)
  description?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  captureId?: string;

  @ApiProperty({ type: [ProposalEndpointDto] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(500)
  @ValidateNested({ each: true })
  @Type(() => ProposalEndpointDto)
  endpoints: ProposalEndpointDto[];
}

/** `?limit=` of the proposal list (50 by default). */
export class ListProposalsQuery extends PageLimitQuery {}
