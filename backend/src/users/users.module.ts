import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { MembersController } from './members.controller';
import { UsersRepository } from './users.repository';
import { UsersService } from './users.service';

/** People who sign in through the identity provider, and their roles in projects. */
@Module({
  imports: [AuditModule],
  controllers: [MembersController],
  providers: [UsersRepository, UsersService],
  exports: [UsersService],
})
export class UsersModule {}
