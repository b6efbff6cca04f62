import { Module } from '@nestjs/common';
import { PartitionsModule } from '../partitions/partitions.module';
import { RetentionRepository } from './retention.repository';
import { RetentionService } from './retention.service';

/** Forgets what is past its retention (committed batch ids). */
@Module({ imports: [PartitionsModule], providers: [RetentionRepository, RetentionService] })
export class RetentionModule {}
