import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { WebhookDeliveryResponse, WebhookResponse } from '@spectator/shared';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { type Agent, fetch } from 'undici';
import type { Principal } from '../auth/tokens.service';
import { AuditService } from '../audit/audit.service';
import { actorOf } from '../common/principal';
import { badInput, DomainError, ErrorCode } from '../common/errors';
import type { ProjectEntity } from '../projects/project.entity';
import { RUNTIME, type Runtime } from '../config/runtime';
import type { CreateWebhookDto } from './dto/webhook.dto';
import { Notifier } from './notifier';
import { SIGNATURE_HEADER, signBody } from './signature';
import { TargetGuard } from './target-guard';
import { type ClaimedDelivery, WebhooksRepository } from './webhooks.repository';

/** Delivery policy (docs/webhooks.md). */
export const DELIVERY = {
  /** Attempts before a delivery is marked failed. */
  maxAttempts: 8,
  /** Wait before the second attempt (ms); doubled for each later one, capped at `maxBackoffMs`. */
  firstBackoffMs: 1_000,
  maxBackoffMs: 10 * 60_000,
  /** A receiver gets this long to answer (ms). */
  timeoutMs: 10_000,
  /** How often each replica looks for due deliveries (ms). */
  pollMs: 500,
  /** Deliveries claimed per look; a claim is a lease, so a replica that dies mid-send frees them. */
  batch: 10,
  /** Longer than a webhook's share of one claim takes at worst (`batch` attempts of `timeoutMs` each, one after the other). */
  leaseSeconds: 120,
  /**
   * Attempts in flight at once in one replica. Deliveries do not wait on each other: a look claims
   * while others are still sending, up to this many, skipping webhooks that have one in flight.
   */
  maxInFlight: 50,
  maxWebhooksPerProject: 20,
} as const;

function withoutCredentials(text: string): string {
  const url = new URL(text);
  if (url.username === '' && url.password === '') return text;
  url.username = '';
  url.password = '';
  return url.toString();
}

/** The wait before attempt `attempt + 1` (ms), after `attempt` failed ones. */
export function backoffMs(attempt: number): number {
  return Math.min(DELIVERY.firstBackoffMs * 2 ** Math.max(0, attempt - 1), DELIVERY.maxBackoffMs);
}

/**
 * Webhook registrations and the delivery worker. Deliveries are rows written in the transaction
 * of the transition they report (Notifier); every replica polls for due ones, claims a few with
 * `FOR UPDATE SKIP LOCKED` and a lease, POSTs them signed, and records the outcome: delivered,
 * retried later with exponential backoff, or failed after `maxAttempts`. Nothing lives only in
 * memory, so deliveries survive restarts and are shared by replicas.
 */
@Injectable()
export class WebhooksService implements OnModuleInit, OnModuleDestroy {
  private readonly log: Logger;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private unsubscribe: (() => void) | null = null;
  private readonly guard: TargetGuard;
  private readonly dispatcher: Agent;
  /** Webhooks with attempts in flight in this replica, each with the end of its chain of attempts. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private attemptsInFlight = 0;

  constructor(
    private readonly webhooks: WebhooksRepository,
    @Inject(RUNTIME) runtime: Runtime,
    private readonly notifier: Notifier,
    private readonly audit: AuditService,
  ) {
    this.log = runtime.log.child({ module: 'webhooks' });
    this.guard = new TargetGuard(runtime.config.webhookAllow);
    this.dispatcher = this.guard.dispatcher({ connectTimeoutMs: DELIVERY.timeoutMs });
  }

  onModuleInit(): void {
    this.unsubscribe = this.notifier.onQueued(() => this.schedule(50));
    this.schedule(DELIVERY.pollMs);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await Promise.all(this.inFlight.values());
    await this.dispatcher.close();
  }

  /**
   * @throws DomainError BadInput for credentials in the URL, or a host that is or resolves to an
   * internal address (loopback, private, link-local, unique-local, …) outside SPECTATOR_WEBHOOK_ALLOW.
   */
  async create(project: ProjectEntity, principal: Principal, input: CreateWebhookDto): Promise<WebhookResponse> {
    const url = new URL(input.url);
    // Said without echoing them: a URL is listed back to every admin of the project.
    if (url.username !== '' || url.password !== '')
      throw badInput('url must not contain credentials (user:password@); receivers check the signature instead');
    const refusal = await this.guard.urlRefusal(input.url);
    if (refusal !== null)
      throw badInput(
        `url: ${refusal}: webhooks do not reach internal addresses (an operator can allow ranges with SPECTATOR_WEBHOOK_ALLOW)`,
      );
    if ((await this.webhooks.count(project.id)) >= DELIVERY.maxWebhooksPerProject)
      throw badInput(`a project has at most ${DELIVERY.maxWebhooksPerProject} webhooks`);
    const secret = input.secret ?? `whsec_${randomBytes(24).toString('base64url')}`;
    const row = await this.webhooks.insert(project.id, input.url, secret, principal.name, input.format);
    await this.audit.record({
      projectId: project.id,
      actor: actorOf(principal),
      action: 'webhook.created',
      target: row.id,
      details: { url: withoutCredentials(row.url), format: row.format },
    });
    return {
      id: row.id,
      url: row.url,
      format: row.format,
      createdAt: row.createdAt.toISOString(),
      createdBy: row.createdBy,
      secret,
    };
  }

  async list(project: ProjectEntity): Promise<WebhookResponse[]> {
    const rows = await this.webhooks.list(project.id);
    // Credentials are refused at registration; a URL registered with some before that shows without them.
    return rows.map((row) => ({
      id: row.id,
      url: withoutCredentials(row.url),
      format: row.format,
      createdAt: row.createdAt.toISOString(),
      createdBy: row.createdBy,
    }));
  }

  /** Deletes a webhook and its delivery log. @throws DomainError WebhookNotFound */
  async remove(project: ProjectEntity, principal: Principal, id: string): Promise<void> {
    const url = await this.webhooks.remove(project.id, id);
    if (url === null) throw this.notFound(project, id);
    await this.audit.record({
      projectId: project.id,
      actor: actorOf(principal),
      action: 'webhook.deleted',
      target: id,
      details: { url: withoutCredentials(url) },
    });
  }

  /** A webhook's deliveries, newest first. @throws DomainError WebhookNotFound */
  async deliveries(project: ProjectEntity, id: string, limit: number): Promise<WebhookDeliveryResponse[]> {
    if (!(await this.webhooks.exists(project.id, id))) throw this.notFound(project, id);
    const rows = await this.webhooks.deliveries(id, limit);
    return rows.map((row) => ({
      id: row.id,
      eventId: row.eventId,
      type: row.type,
      status: row.status,
      attempts: row.attempts,
      lastStatus: row.lastStatus,
      lastError: row.lastError,
      createdAt: row.createdAt.toISOString(),
      nextAttemptAt: row.status === 'pending' ? row.nextAttemptAt.toISOString() : null,
      deliveredAt: row.deliveredAt?.toISOString() ?? null,
    }));
  }

  /**
   * Claims what is due now and starts sending it; resolves once claimed (not sent), with the count.
   * Webhooks in parallel, each webhook's deliveries one after the other in the order they were
   * emitted; webhooks with an attempt in flight are not claimed from again until it ends, so a slow
   * receiver holds up only its own deliveries. `settled()` waits for the attempts.
   */
  async deliverDue(): Promise<number> {
    const room = Math.min(DELIVERY.batch, DELIVERY.maxInFlight - this.attemptsInFlight);
    if (room <= 0) return 0;
    const claimed = await this.webhooks.claimDue(room, DELIVERY.leaseSeconds, [...this.inFlight.keys()]);
    this.attemptsInFlight += claimed.length;
    for (const delivery of claimed.sort((a, b) => Number(a.seq) - Number(b.seq))) {
      const chain = (this.inFlight.get(delivery.webhookId) ?? Promise.resolve())
        .then(() => this.attempt(delivery))
        .catch((err: unknown) =>
          this.log.warn(
            { err, deliveryId: delivery.id },
            'webhook delivery not recorded; it is sent again when its lease ends',
          ),
        )
        .finally(() => {
          this.attemptsInFlight--;
          if (this.inFlight.get(delivery.webhookId) === chain) this.inFlight.delete(delivery.webhookId);
          // Room again, and this webhook's next deliveries may be due.
          this.schedule(0);
        });
      this.inFlight.set(delivery.webhookId, chain);
    }
    return claimed.length;
  }

  /** Resolves when the attempts in flight now are recorded. */
  async settled(): Promise<void> {
    await Promise.all(this.inFlight.values());
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    let status: number | null = null;
    let error: string | null = null;
    try {
      // A literal address is connected to without a lookup, so it is checked here; names are checked
      // in the connection's lookup (TargetGuard), whatever they resolve to at that moment.
      const literal = this.guard.literalRefusal(delivery.url);
      if (literal !== null)
        throw Object.assign(new Error('fetch failed'), { cause: { code: 'EADDRNOTALLOWED', message: literal } });
      const response = await fetch(delivery.url, {
        method: 'POST',
        redirect: 'manual',
        dispatcher: this.dispatcher,
        signal: AbortSignal.timeout(DELIVERY.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'spectator-webhooks/1',
          [SIGNATURE_HEADER]: signBody(delivery.secret, delivery.body),
          'X-Spectator-Event': delivery.type,
          'X-Spectator-Delivery': delivery.id,
        },
        body: delivery.body,
      });
      status = response.status;
      await response.body?.cancel();
      if (status < 200 || status >= 300) error = `receiver answered ${status}`;
    } catch (err) {
      // fetch says only "fetch failed"; the reason is its cause: a code (ECONNREFUSED, ENOTFOUND) or,
      // without one, a message ("bad port": fetch refuses ports such as 1, 9, 6000 outright).
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const reason =
        cause?.code === 'EADDRNOTALLOWED' ? `${cause.code}: ${cause.message}` : (cause?.code ?? cause?.message);
      error =
        (err as Error).name === 'TimeoutError'
          ? `no answer within ${DELIVERY.timeoutMs} ms`
          : `${(err as Error).message}${reason ? ` (${reason})` : ''}`;
    }
    if (error === null) {
      await this.webhooks.delivered(delivery.id, status);
      return;
    }
    const failed = delivery.attempts >= DELIVERY.maxAttempts;
    this.log.warn(
      { deliveryId: delivery.id, attempts: delivery.attempts, status, failed },
      'webhook delivery attempt failed',
    );
    await this.webhooks.attemptFailed(delivery.id, {
      status: failed ? 'failed' : 'pending',
      lastStatus: status,
      lastError: error.slice(0, 500),
      retryInMs: backoffMs(delivery.attempts),
    });
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.deliverDue()
        .then((sent) => {
          this.running = null;
          // A full batch means more may be due: look again at once.
          this.schedule(sent >= DELIVERY.batch ? 0 : DELIVERY.pollMs);
        })
        .catch((err: unknown) => {
          this.running = null;
          if (!this.stopped) this.log.warn({ err }, 'webhook delivery round failed');
          this.schedule(DELIVERY.pollMs);
        });
    }, delayMs);
    this.timer.unref();
  }

  private notFound(project: ProjectEntity, id: string): DomainError {
    return new DomainError(ErrorCode.WebhookNotFound, `webhook ${id} does not exist in project ${project.slug}`);
  }
}
