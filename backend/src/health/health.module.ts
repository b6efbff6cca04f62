import { Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { HealthRepository } from './health.repository';
import { MetricsService } from './metrics.service';

/** `/health` and `/metrics`; the counters other modules update. */
@Module({
  controllers: [HealthController],
  providers: [HealthRepository, MetricsService],
  exports: [MetricsService],
})
export class HealthModule {}
