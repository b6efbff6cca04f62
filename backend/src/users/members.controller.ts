import { Body, Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { GroupRoleResponse, MemberResponse, MembersResponse } from '@spectator/shared';
import { CurrentPrincipal, CurrentProject, RequireScope } from '../common/access';
import type { Principal } from '../common/principal';
import { uuidPipe } from '../common/validation';
import { GroupRolesDto, SetMemberDto } from './dto/members.dto';
import { type ProjectRef, UsersService } from './users.service';

/** Who may do what in a project: roles given to people, and to provider groups. Admins only. */
@ApiTags('members')
@ApiBearerAuth()
@Controller('projects/:p')
export class MembersController {
  constructor(private readonly users: UsersService) {}

  @Get('members')
  @RequireScope('admin')
  list(@CurrentProject() project: ProjectRef): Promise<MembersResponse> {
    return this.users.members(project);
  }

  @Put('members')
  @RequireScope('admin')
  set(
    @CurrentProject() project: ProjectRef,
    @CurrentPrincipal() principal: Principal,
    @Body() body: SetMemberDto,
  ): Promise<MemberResponse> {
    return this.users.setMember(project, principal, body.email, body.role);
  }

  @Delete('members/:userId')
  @HttpCode(204)
  @RequireScope('admin')
  remove(
    @CurrentProject() project: ProjectRef,
    @CurrentPrincipal() principal: Principal,
    @Param('userId', uuidPipe('userId')) userId: string,
  ): Promise<void> {
    return this.users.removeMember(project, principal, userId);
  }

  @Put('group-roles')
  @RequireScope('admin')
  groupRoles(
    @CurrentProject() project: ProjectRef,
    @CurrentPrincipal() principal: Principal,
    @Body() body: GroupRolesDto,
  ): Promise<GroupRoleResponse[]> {
    return this.users.replaceGroupRoles(project, principal, body.groupRoles);
  }
}
