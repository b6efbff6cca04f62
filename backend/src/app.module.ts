import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AgentsController } from './agents/agents.controller';
import { AgentsService } from './agents/agents.service';
import { AuthGuard } from './auth/auth.guard';
import { TokenWatch } from './auth/token-watch';
import { TokensService } from './auth/tokens.service';
import { CapturesController } from './captures/captures.controller';
import { CapturesService } from './captures/captures.service';
import { RegroupService } from './paths/regroup.service';
import { PathHintsController } from './paths/path-hints.controller';
import { PathHintsService } from './paths/path-hints.service';
import { ShapeStore } from './captures/shape-store';
import { ErrorFilter } from './common/error.filter';
import { WebSocketRouter } from './common/websocket-router';
import { ENTITIES } from './database/entities';
import { EndpointsController } from './endpoints/endpoints.controller';
import { EndpointsService } from './endpoints/endpoints.service';
import { VersionStore } from './versions/version-store';
import { CiGateService } from './evidence/ci-gate.service';
import { CompareService } from './evidence/compare.service';
import { EvidenceController } from './evidence/evidence.controller';
import { EvidenceService } from './evidence/evidence.service';
import { MatrixService } from './evidence/matrix.service';
import { OpenApiController } from './openapi/openapi.controller';
import { OpenApiService } from './openapi/openapi.service';
import { ProposalsController } from './proposals/proposals.controller';
import { ProposalsService } from './proposals/proposals.service';
import { Notifier } from './webhooks/notifier';
import { WebhooksController } from './webhooks/webhooks.controller';
import { WebhooksService } from './webhooks/webhooks.service';
import { EventsGateway } from './events/events.gateway';
import { EventsService } from './events/events.service';
import { HealthController } from './health/health.controller';
import { MetricsService } from './health/metrics.service';
import { AgentGateway } from './ingest/agent-gateway';
import { IngestService } from './ingest/ingest.service';
import { ProjectsController } from './projects/projects.controller';
import { MeController } from './auth/me.controller';
import { AuthController } from './auth/auth.controller';
import { OidcService } from './auth/oidc.service';
import { SessionsRepository } from './auth/sessions.repository';
import { UsersModule } from './users/users.module';
import { RetentionService } from './retention/retention.service';
import { ProjectsService } from './projects/projects.service';
import { RUNTIME, type Runtime } from './config/runtime';

/**
 * The whole service. Providers are grouped by domain folder (auth, projects, captures, endpoints,
 * ingest, events, health); one module keeps the wiring in one readable place.
 */
/** Holds the runtime for every module (global). */
@Module({})
class RuntimeModule {}

@Module({})
export class AppModule {
  /** The module for an initialised data source (migrations already applied or skipped). */
  static forRuntime(runtime: Runtime, dataSource: DataSource): DynamicModule {
    return {
      module: AppModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({ type: 'postgres', url: runtime.databaseUrl }),
          dataSourceFactory: async () => dataSource,
        }),
        TypeOrmModule.forFeature(ENTITIES),
        // The runtime (config, logger) for every module, as domain modules move out of this one.
        {
          module: RuntimeModule,
          global: true,
          providers: [{ provide: RUNTIME, useValue: runtime }],
          exports: [RUNTIME],
        },
        UsersModule,
      ],
      controllers: [
        HealthController,
        AuthController,
        MeController,
        ProjectsController,
        CapturesController,
        PathHintsController,
        EndpointsController,
        AgentsController,
        EvidenceController,
        ProposalsController,
        WebhooksController,
        OpenApiController,
      ],
      providers: [
        { provide: APP_GUARD, useExisting: AuthGuard },
        { provide: APP_FILTER, useFactory: () => new ErrorFilter(runtime.log.child({ module: 'http' })) },
        AuthGuard,
        TokensService,
        TokenWatch,
        OidcService,
        SessionsRepository,
        ProjectsService,
        ShapeStore,
        VersionStore,
        CapturesService,
        RegroupService,
        PathHintsService,
        EndpointsService,
        EventsService,
        MetricsService,
        IngestService,
        RetentionService,
        AgentsService,
        AgentGateway,
        EventsGateway,
        WebSocketRouter,
        Notifier,
        EvidenceService,
        MatrixService,
        CiGateService,
        CompareService,
        ProposalsService,
        WebhooksService,
        OpenApiService,
      ],
    };
  }
}
