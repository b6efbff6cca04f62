import { Module } from '@nestjs/common';
import { CapturesModule } from '../captures/captures.module';
import { CommonModule } from '../common/common.module';
import { VersionsModule } from '../versions/versions.module';
import { ConsumersController } from './consumers.controller';
import { ConsumersRepository } from './consumers.repository';
import { ConsumersService } from './consumers.service';

/** Consumer calls per endpoint, status and environment: written by ingest, read as who calls what and blast radius. */
@Module({
  imports: [CommonModule, CapturesModule, VersionsModule],
  controllers: [ConsumersController],
  providers: [ConsumersRepository, ConsumersService],
  exports: [ConsumersService],
})
export class ConsumersModule {}
