import { Global, Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { ProjectsModule } from '../projects/projects.module';
import { UsersModule } from '../users/users.module';
import { AuthController } from './auth.controller';
import { AuthGuard } from './auth.guard';
import { MeController } from './me.controller';
import { OidcService } from './oidc.service';
import { SessionsRepository } from './sessions.repository';
import { TokenWatch } from './token-watch';
import { TokensController } from './tokens.controller';
import { TokensService } from './tokens.service';

/**
 * Who is calling: tokens, sign-in sessions and the guard every route passes (AppModule makes it
 * the global guard). Global, because every module's routes and gateways authenticate.
 */
@Global()
@Module({
  imports: [ProjectsModule, UsersModule, AuditModule],
  controllers: [AuthController, MeController, TokensController],
  providers: [AuthGuard, TokensService, TokenWatch, OidcService, SessionsRepository],
  exports: [AuthGuard, TokensService, TokenWatch],
})
export class AuthModule {}
