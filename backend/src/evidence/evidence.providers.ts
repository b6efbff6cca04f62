import { OpenApiController } from '../openapi/openapi.controller';
import { OpenApiService } from '../openapi/openapi.service';
import { ProposalsController } from '../proposals/proposals.controller';
import { ProposalsService } from '../proposals/proposals.service';
import { Notifier } from '../webhooks/notifier';
import { WebhooksController } from '../webhooks/webhooks.controller';
import { WebhooksService } from '../webhooks/webhooks.service';
import { CiGateService } from './ci-gate.service';
import { CompareService } from './compare.service';
import { EvidenceController } from './evidence.controller';
import { EvidenceService } from './evidence.service';
import { MatrixService } from './matrix.service';

/** Controllers of versions, evidence, proposals, webhooks, the CI gate and the OpenAPI export (registered in AppModule). */
export const EVIDENCE_CONTROLLERS = [EvidenceController, ProposalsController, WebhooksController, OpenApiController];

/** Their providers. */
export const EVIDENCE_PROVIDERS = [
  Notifier,
  EvidenceService,
  MatrixService,
  CiGateService,
  CompareService,
  ProposalsService,
  WebhooksService,
  OpenApiService,
];
