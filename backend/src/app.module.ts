import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AgentsModule } from './agents/agents.module';
import { AuthGuard } from './auth/auth.guard';
import { AuthModule } from './auth/auth.module';
import { CapturesModule } from './captures/captures.module';
import { ChangelogModule } from './changelog/changelog.module';
import { CommonModule } from './common/common.module';
import { ConsumersModule } from './consumers/consumers.module';
import { ErrorFilter } from './common/error.filter';
import { RUNTIME, type Runtime } from './config/runtime';
import { EndpointsModule } from './endpoints/endpoints.module';
import { EventsModule } from './events/events.module';
import { DriftModule } from './drift/drift.module';
import { EvidenceModule } from './evidence/evidence.module';
import { HealthModule } from './health/health.module';
import { IngestModule } from './ingest/ingest.module';
import { MatrixModule } from './matrix/matrix.module';
import { OpenApiModule } from './openapi/openapi.module';
import { PathsModule } from './paths/paths.module';
import { ProjectsModule } from './projects/projects.module';
import { ProposalsModule } from './proposals/proposals.module';
import { RetentionModule } from './retention/retention.module';
import { RuntimeModule } from './runtime/runtime.module';
import { UsageModule } from './usage/usage.module';
import { UsersModule } from './users/users.module';
import { VersionsModule } from './versions/versions.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { AuditModule } from './audit/audit.module';

/** Holds the runtime for every module (global). */
@Module({})
class GlobalRuntimeModule {}

/**
 * The whole service: one Nest module per domain folder, each owning its controller, services and
 * repository and exporting what other domains may call. This module adds the data source, the
 * runtime, the global guard and the error filter.
 */
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
        // The runtime (config, logger) for every module.
        {
          module: GlobalRuntimeModule,
          global: true,
          providers: [{ provide: RUNTIME, useValue: runtime }],
          exports: [RUNTIME],
        },
        CommonModule,
        HealthModule,
        AuditModule,
        ProjectsModule,
        UsersModule,
        AuthModule,
        EventsModule,
        VersionsModule,
        CapturesModule,
        WebhooksModule,
        EvidenceModule,
        DriftModule,
        ProposalsModule,
        PathsModule,
        EndpointsModule,
        OpenApiModule,
        ChangelogModule,
        UsageModule,
        AgentsModule,
        RetentionModule,
        RuntimeModule,
        MatrixModule,
        ConsumersModule,
        IngestModule,
      ],
      providers: [
        { provide: APP_GUARD, useExisting: AuthGuard },
        { provide: APP_FILTER, useFactory: () => new ErrorFilter(runtime.log.child({ module: 'http' })) },
      ],
    };
  }
}
