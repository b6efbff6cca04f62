import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import type { WebSocket } from 'ws';
import { PeriodicJob } from '../common/periodic';
import { RECHECK_MINUTES } from '../config/oidc';
import { RUNTIME, type Runtime } from '../config/runtime';
import { SessionsRepository } from './sessions.repository';
import { tokensRepository } from './tokens.repository';

/** Close code for a socket whose token stopped working: policy violation, as for any refused peer. */
export const TOKEN_ENDED_CLOSE_CODE = 1008;

/**
 * Ends open WebSockets (agent streams, dashboard events) whose token was revoked or expired, or
 * whose person's session ended (sign-out, expiry, older than SPECTATOR_OIDC_RECHECK_MINUTES),
 * after they were opened. A token is checked when
 * a connection opens; without this an agent connected for weeks would keep streaming on a revoked
 * token. Every replica checks the tokens of its own
 * open connections every `tokenCheckSeconds` (one query for all of them), so a revocation made
 * through any replica, or an expiry, ends them within that time; the replica that revokes checks
 * at once.
 */
@Injectable()
export class TokenWatch implements OnModuleInit, OnModuleDestroy {
  private readonly watchers = new Map<string, Set<(reason: string) => void>>();
  /** The same for people's sessions (dashboards with a session cookie), by the session's hash. */
  private readonly sessionWatchers = new Map<string, Set<(reason: string) => void>>();
  private readonly job: PeriodicJob;
  private readonly log: Logger;
  private readonly recheckMinutes: number;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly sessions: SessionsRepository,
    @Inject(RUNTIME) runtime: Runtime,
  ) {
    this.log = runtime.log.child({ module: 'token-watch' });
    this.recheckMinutes = runtime.config.oidc?.recheckMinutes ?? RECHECK_MINUTES.fallback;
    this.job = new PeriodicJob(
      "checking open connections' tokens",
      runtime.config.tokenCheckSeconds * 1000,
      () => this.check(),
      this.log,
    );
  }

  onModuleInit(): void {
    this.job.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.job.stop();
  }

  /** Closes `ws` (1008, with the reason) once its token stops working; stops watching when it closes. */
  closeWhenTokenEnds(ws: WebSocket, tokenId: string): void {
    watch(this.watchers, ws, tokenId);
  }

  /** Closes `ws` (1008, `session ended`) once a person's session ends: sign-out (on any replica) or expiry. */
  closeWhenSessionEnds(ws: WebSocket, sessionHash: string): void {
    watch(this.sessionWatchers, ws, sessionHash);
  }

  /**
   * Checks at once, after a revocation on this replica. A failure is logged, not thrown: the token
   * is revoked already, and the periodic check ends its connections anyway.
   */
  async checkNow(): Promise<void> {
    await this.check().catch((error: unknown) =>
      this.log.warn({ err: error }, "checking open connections' tokens failed"),
    );
  }

  /**
   * Ends the watched connections whose token is revoked or expired (by the database's clock).
   * @returns how many connections were ended
   */
  async check(): Promise<number> {
    let count = 0;
    if (this.watchers.size > 0) {
      const ended = await tokensRepository.ended(this.db, [...this.watchers.keys()]);
      for (const { id, reason } of ended) count += endAll(this.watchers, id, reason);
      if (count > 0)
        this.log.info(
          { connections: count, tokens: ended.length },
          'closed connections whose token was revoked or expired',
        );
    }
    if (this.sessionWatchers.size > 0) {
      const live = new Set(await this.sessions.liveOf([...this.sessionWatchers.keys()], this.recheckMinutes));
      let sessions = 0;
      for (const hash of [...this.sessionWatchers.keys()])
        if (!live.has(hash)) sessions += endAll(this.sessionWatchers, hash, 'session ended');
      if (sessions > 0) this.log.info({ connections: sessions }, 'closed connections whose session ended');
      count += sessions;
    }
    return count;
  }
}

/** Adds `ws` to the watchers of `key` until it closes. */
function watch(watchers: Map<string, Set<(reason: string) => void>>, ws: WebSocket, key: string): void {
  const end = (reason: string): void => ws.close(TOKEN_ENDED_CLOSE_CODE, reason);
  let set = watchers.get(key);
  if (set === undefined) watchers.set(key, (set = new Set()));
  set.add(end);
  ws.once('close', () => {
    const current = watchers.get(key);
    current?.delete(end);
    if (current?.size === 0) watchers.delete(key);
  });
}

/** Ends every connection watched under `key`. @returns how many */
function endAll(watchers: Map<string, Set<(reason: string) => void>>, key: string, reason: string): number {
  const set = watchers.get(key);
  watchers.delete(key);
  for (const end of set ?? []) end(reason);
  return set?.size ?? 0;
}
