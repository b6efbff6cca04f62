import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { EndpointRefDto } from '../../captures/dto/captures.dto';

export class DocumentEndpointDto extends EndpointRefDto {
  @ApiPropertyOptional({ example: 'Create a new post. Accepts author, title as JSON in request body' })
  @IsOptional()
  @IsString()
  @MaxLength(10_000)
  description?: string;

  @ApiProperty({ description: 'Document the request and response bodies (merged observed shapes per status code)' })
  @IsBoolean()
  documentBodies: boolean;
}

export class DocumentationDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID()
  captureId: string;

  @ApiProperty({ type: [DocumentEndpointDto] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(500)
  @ValidateNested({ each: true })
  @Type(() => DocumentEndpointDto)
  endpoints: DocumentEndpointDto[];

  @ApiPropertyOptional({ description: 'Title of the proposal this commit makes' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  message?: string;
}
