import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** The SQL of the readiness check: one round trip to the database, no table read. */
@Injectable()
export class HealthRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** A round trip through the pool. @throws when the database is not reachable. */
  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }
}
