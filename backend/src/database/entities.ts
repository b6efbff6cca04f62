import { TokenEntity } from '../auth/token.entity';
import { CaptureEntity } from '../captures/capture.entity';
import { EndpointVersionEntity } from '../endpoints/endpoint-version.entity';
import { EndpointEntity } from '../endpoints/endpoint.entity';
import { ProjectEntity } from '../projects/project.entity';
import { ProposalEntity, ProposalStepEntity } from '../proposals/proposal.entity';

/**
 * Entities mapped by TypeORM. Agents, shapes, observations and processed batches are written and
 * aggregated with hand-written SQL (ingest hot path, aggregate views), so they have no entity.
 */
export const ENTITIES = [
  ProjectEntity,
  TokenEntity,
  CaptureEntity,
  EndpointEntity,
  EndpointVersionEntity,
  ProposalEntity,
  ProposalStepEntity,
];
