import { Module } from '@nestjs/common';
import { RetentionRepository } from './retention.repository';
import { RetentionService } from './retention.service';

/** Forgets what is past its retention (committed batch ids). */
@Module({ providers: [RetentionRepository, RetentionService] })
export class RetentionModule {}
