import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { TokenResponse } from '@spectator/shared';
import { CurrentPrincipal, CurrentProject, RequireScope } from '../common/access';
import type { Principal } from '../common/principal';
import { uuidPipe } from '../common/validation';
import type { ProjectEntity } from '../projects/project.entity';
import { CreateTokenDto } from './dto/token.dto';
import { TokensService } from './tokens.service';

/**
 * A project's tokens, for agents and automation: made by an admin (attributed to them), listed
 * with who made each and when it was last used, revoked.
 */
@ApiTags('projects')
@ApiBearerAuth()
@Controller('projects/:p/tokens')
export class TokensController {
  constructor(private readonly tokens: TokensService) {}

  @Post()
  @RequireScope('admin')
  create(
    @CurrentProject() project: ProjectEntity,
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateTokenDto,
  ): Promise<TokenResponse> {
    return this.tokens.create(project.id, body, principal);
  }

  @Get()
  @RequireScope('admin')
  list(@CurrentProject() project: ProjectEntity): Promise<TokenResponse[]> {
    return this.tokens.list(project.id);
  }

  @Delete(':tokenId')
  @HttpCode(204)
  @RequireScope('admin')
  revoke(
    @CurrentProject() project: ProjectEntity,
    @CurrentPrincipal() principal: Principal,
    @Param('tokenId', uuidPipe('tokenId')) tokenId: string,
  ): Promise<void> {
    return this.tokens.revoke(project.id, tokenId, principal);
  }
}
