import { Module } from '@nestjs/common';
import { RetentionService } from './retention.service';

/** Forgets what is past its retention (committed batch ids). */
@Module({ providers: [RetentionService] })
export class RetentionModule {}
