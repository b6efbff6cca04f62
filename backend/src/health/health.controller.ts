import { Controller, Get, Header, HttpCode, Inject, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import { RequireScope } from '../auth/auth.guard';
import { apiError } from '../common/error.filter';
import { DomainError, ErrorCode } from '../common/errors';
import { RUNTIME, type Runtime } from '../config/runtime';
import { HealthRepository } from './health.repository';
import { MetricsService } from './metrics.service';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

@ApiTags('health')
@RequireScope('public')
@Controller()
export class HealthController {
  constructor(
    private readonly database: HealthRepository,
    private readonly metrics: MetricsService,
    @Inject(RUNTIME) private readonly runtime: Runtime,
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
      await this.database.ping();
      return { status: 'ok', database: 'ok' };
    } catch {
      response.status(503);
      return apiError(503, 'database is not reachable');
    }
  }

  /**
   * Prometheus text, for `Authorization: Bearer <SPECTATOR_METRICS_TOKEN>` only (counts and rates
   * say how the service is used); 404 when no metrics token is configured.
   */
  @Get('metrics')
  @HttpCode(200)
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  render(@Req() request: Request): string {
    const expected = this.runtime.config.metricsToken;
    if (expected === null)
      throw new DomainError(ErrorCode.NotServed, 'metrics are not served: set SPECTATOR_METRICS_TOKEN to serve them');
    const given = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
    if (!timingSafeEqual(digest(given), digest(expected)))
      throw new DomainError(ErrorCode.Unauthenticated, 'metrics need Authorization: Bearer <SPECTATOR_METRICS_TOKEN>');
    return this.metrics.render();
  }
}
