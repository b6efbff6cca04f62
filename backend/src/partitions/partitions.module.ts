import { Module } from '@nestjs/common';
import { PartitionsRepository } from './partitions.repository';
import { PartitionsService } from './partitions.service';

/** The partitions of the tables partitioned by time: made ahead by one piece of code, dropped by each table's retention. */
@Module({ providers: [PartitionsRepository, PartitionsService], exports: [PartitionsRepository, PartitionsService] })
export class PartitionsModule {}
