import { Module } from '@nestjs/common';
import { CommonModule } from '../common/common.module';
import { RuntimeController } from './runtime.controller';
import { RuntimeRepository } from './runtime.repository';
import { RuntimeService } from './runtime.service';

/** Runtime evidence per endpoint, version and environment: written by ingest, rolled up, read as series. */
@Module({
  imports: [CommonModule],
  controllers: [RuntimeController],
  providers: [RuntimeRepository, RuntimeService],
  exports: [RuntimeService],
})
export class RuntimeModule {}
