import { Inject, Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { AuthGuard, ensureScope } from '../auth/auth.guard';
import { TokenWatch } from '../auth/token-watch';
import { type WebSocketRoute, WebSocketRouter } from '../common/websocket-router';
import type { Principal } from '../common/principal';
import { chooseProtocol, keepAlive, refuseUpgrade, refuseUpgradeFor } from '../common/ws-upgrade';
import { MetricsService } from '../health/metrics.service';
import { RUNTIME, type Runtime } from '../config/runtime';
import { EventsService } from './events.service';

const EVENTS_PATH = /^\/api\/v1\/projects\/([^/]+)\/events\/?$/;

/** `WS /api/v1/projects/{p}/events`: live events for dashboards (read scope). Incoming frames are ignored. */
@Injectable()
export class EventsGateway implements WebSocketRoute {
  private readonly server = new WebSocketServer({
    noServer: true,
    maxPayload: 64 * 1024,
    handleProtocols: chooseProtocol,
  });
  private readonly log: Logger;

  constructor(
    private readonly watch: TokenWatch,
    private readonly guard: AuthGuard,
    private readonly events: EventsService,
    private readonly metrics: MetricsService,
    @Inject(RUNTIME) runtime: Runtime,
    router: WebSocketRouter,
  ) {
    this.log = runtime.log.child({ module: 'dashboard-events' });
    router.add(this);
  }

  matchUpgrade(pathname: string): string[] | null {
    const slug = EVENTS_PATH.exec(pathname)?.[1];
    return slug === undefined ? null : [slug];
  }

  async handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, [encoded = '']: string[]): Promise<void> {
    let slug: string;
    try {
      slug = decodeURIComponent(encoded);
    } catch {
      refuseUpgrade(socket, 400, 'project slug is not valid URL encoding');
      return;
    }
    let projectId: string;
    let principal: Principal;
    try {
      principal = await this.guard.authenticateUpgrade(request);
      const project = await this.guard.projectFor(principal, slug);
      ensureScope(principal, 'read');
      projectId = project.id;
    } catch (error) {
      if (!refuseUpgradeFor(socket, error)) this.log.error({ err: error }, 'dashboard authentication failed');
      return;
    }
    this.server.handleUpgrade(request, socket, head, (ws) => this.attach(ws, projectId, principal));
  }

  private attach(ws: WebSocket, projectId: string, principal: Principal): void {
    this.metrics.dashboardConnections.inc();
    if (principal.kind === 'person') this.watch.closeWhenSessionEnds(ws, principal.sessionHash);
    else this.watch.closeWhenTokenEnds(ws, principal.tokenId);
    const stopHeartbeat = keepAlive(ws);
    const unsubscribe = this.events.subscribe(projectId, (event) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(event));
    });
    ws.on('error', (error) => this.log.debug({ err: error }, 'dashboard socket error'));
    ws.on('close', () => {
      unsubscribe();
      stopHeartbeat();
      this.metrics.dashboardConnections.dec();
    });
  }

  async close(): Promise<void> {
    for (const client of this.server.clients) client.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
