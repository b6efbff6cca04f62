import { Module } from '@nestjs/common';
import { EndpointsModule } from '../endpoints/endpoints.module';
import { EvidenceModule } from '../evidence/evidence.module';
import { ProposalsModule } from '../proposals/proposals.module';
import { UsageModule } from '../usage/usage.module';
import { OpenApiController } from './openapi.controller';
import { OpenApiService } from './openapi.service';

/** The OpenAPI export of the documentation, and imports of a document as a proposal. */
@Module({
  imports: [EndpointsModule, EvidenceModule, ProposalsModule, UsageModule],
  controllers: [OpenApiController],
  providers: [OpenApiService],
})
export class OpenApiModule {}
