import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsString, Length, Matches, ValidateIf } from 'class-validator';

export class CreateProjectDto {
  @ApiProperty({ example: 'posts-api', description: 'Lower-case letters, digits and -, 1-63 characters' })
  @IsString()
  @Matches(/^[a-z0-9][a-z0-9-]{0,62}$/, {
    message: 'slug must be 1-63 characters of a-z, 0-9 and -, starting with a letter or digit',
  })
  slug: string;

  @ApiProperty({ example: 'Posts API' })
  @IsString()
  @Length(1, 200)
  name: string;
}

export class UpdateProjectDto {
  @ApiPropertyOptional({ description: "Four eyes: a proposal's author cannot approve it" })
  // Left out means unchanged; null is not a setting (IsOptional would let it through to a NOT NULL column).
  @ValidateIf((_object, value) => value !== undefined)
  @IsBoolean({ message: 'fourEyes must be true or false' })
  fourEyes?: boolean;
}
