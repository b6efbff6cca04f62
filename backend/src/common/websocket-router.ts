import { Injectable, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ROUTES } from '@spectator/shared';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { EventsGateway } from '../events/events.gateway';
import { AgentGateway } from '../ingest/agent-gateway';
import { refuseUpgrade } from './ws-upgrade';

const EVENTS_PATH = /^\/api\/v1\/projects\/([^/]+)\/events\/?$/;

/**
 * Routes WebSocket upgrades of the HTTP server by path: the agent stream and the per-project
 * dashboard events (a path with a parameter, which the fixed-path ws adapter cannot route).
 */
@Injectable()
export class WebSocketRouter implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private server: Server | null = null;
  private readonly onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => undefined);
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname === ROUTES.agentStream) {
      void this.agents.handleUpgrade(request, socket, head);
      return;
    }
    const events = EVENTS_PATH.exec(url.pathname);
    if (events?.[1] !== undefined) {
      let slug: string;
      try {
        slug = decodeURIComponent(events[1]);
      } catch {
        refuseUpgrade(socket, 400, 'project slug is not valid URL encoding');
        return;
      }
      void this.dashboards.handleUpgrade(request, socket, head, slug);
      return;
    }
    refuseUpgrade(socket, 404, `no WebSocket at ${url.pathname}`);
  };

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly agents: AgentGateway,
    private readonly dashboards: EventsGateway,
  ) {}

  onApplicationBootstrap(): void {
    this.server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    this.server.on('upgrade', this.onUpgrade);
  }

  /** Before the HTTP server closes: it would wait forever for upgraded sockets otherwise. */
  async beforeApplicationShutdown(): Promise<void> {
    this.server?.off('upgrade', this.onUpgrade);
    await Promise.all([this.agents.close(), this.dashboards.close()]);
  }
}
