import { Controller, Get, Header, HttpCode, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import type { DataSource } from 'typeorm';
import { RequireScope } from '../auth/auth.guard';
import { apiError } from '../common/error.filter';
import { MetricsService } from './metrics.service';

@ApiTags('health')
@RequireScope('public')
@Controller()
export class HealthController {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * Liveness: the process answers, whatever the database does. A liveness probe on `health`
   * would restart every replica during a database outage that a restart cannot fix.
   */
  @Get('health/live')
  live(): object {
    return { status: 'ok' };
  }

  /** Readiness: a database round trip; 503 with the standard error body when the database is away. */
  @Get('health')
  async health(@Res({ passthrough: true }) response: Response): Promise<object> {
    try {
      await this.db.query('SELECT 1');
      return { status: 'ok', database: 'ok' };
    } catch {
      response.status(503);
      return apiError(503, 'database is not reachable');
    }
  }

  @Get('metrics')
  @HttpCode(200)
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  render(): string {
    return this.metrics.render();
  }
}
