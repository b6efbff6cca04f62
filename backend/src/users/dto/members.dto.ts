import { ApiProperty } from '@nestjs/swagger';
import { PROJECT_ROLES, type ProjectRole } from '@spectator/shared';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsString, Length, Matches, ValidateNested } from 'class-validator';

export class SetMemberDto {
  @ApiProperty({ example: 'alice@example.com', description: 'The email of a person who signed in at least once' })
  // Not @IsEmail: validator's isEmail throws (a 500) on a lone UTF-16 surrogate. The address is
  // only looked up among people who signed in, so its shape is all that needs checking.
  @IsString()
  @Matches(/^[^\s@]{1,256}@[^\s@]{1,256}$/, { message: 'email must be an email address' })
  email: string;

  @ApiProperty({ enum: PROJECT_ROLES })
  @IsIn(PROJECT_ROLES, { message: `role must be one of ${PROJECT_ROLES.join(', ')}` })
  role: ProjectRole;
}

export class GroupRoleDto {
  @ApiProperty({ example: 'api-team', description: 'A group as the provider names it in the groups claim' })
  @IsString()
  @Length(1, 400)
  group: string;

  @ApiProperty({ enum: PROJECT_ROLES })
  @IsIn(PROJECT_ROLES, { message: `role must be one of ${PROJECT_ROLES.join(', ')}` })
  role: ProjectRole;
}

export class GroupRolesDto {
  @ApiProperty({ type: [GroupRoleDto], description: 'The whole mapping: it replaces the one there is' })
  @IsArray()
  @ArrayMaxSize(200)
  @ValidateNested({ each: true })
  @Type(() => GroupRoleDto)
  groupRoles: GroupRoleDto[];
}
