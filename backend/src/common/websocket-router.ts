import { Injectable, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { refuseUpgrade } from './ws-upgrade';

/** A WebSocket endpoint of the HTTP server; each gateway adds itself to the router. */
export interface WebSocketRoute {
  /** The path parameters (still URL-encoded) when this route serves `pathname`, or null when it does not. */
  matchUpgrade(pathname: string): string[] | null;
  /** Authenticates and upgrades, or refuses on the socket; never throws. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, parameters: string[]): Promise<void>;
  /** Ends every connection of the route. */
  close(): Promise<void>;
}

/**
 * Routes WebSocket upgrades of the HTTP server by path to the routes gateways add (the agent
 * stream, the per-project dashboard events: a path with a parameter, which the fixed-path ws
 * adapter cannot route). It knows no route itself, so `common/` imports no domain.
 */
@Injectable()
export class WebSocketRouter implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private server: Server | null = null;
  private readonly routes: WebSocketRoute[] = [];
  private readonly onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => undefined);
    const url = new URL(request.url ?? '/', 'http://localhost');
    for (const route of this.routes) {
      const parameters = route.matchUpgrade(url.pathname);
      if (parameters === null) continue;
      void route.handleUpgrade(request, socket, head, parameters);
      return;
    }
    refuseUpgrade(socket, 404, `no WebSocket at ${url.pathname}`);
  };

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  /** Adds a route (gateways call this when they are built, before the server listens). */
  add(route: WebSocketRoute): void {
    this.routes.push(route);
  }

  onApplicationBootstrap(): void {
    this.server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    this.server.on('upgrade', this.onUpgrade);
  }

  /** Before the HTTP server closes: it would wait forever for upgraded sockets otherwise. */
  async beforeApplicationShutdown(): Promise<void> {
    this.server?.off('upgrade', this.onUpgrade);
    await Promise.all(this.routes.map((route) => route.close()));
  }
}
