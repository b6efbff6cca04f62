import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics';

export interface AdminStatus {
  /** Reasons the agent is not ready; empty when ready. */
  notReady(): string[];
}

/**
 * The admin listener: `/healthz` (the process is alive), `/readyz` (proxy listening, not shutting
 * down, upstream answering) and `/metrics` (Prometheus text). Separate from the proxy port so
 * probes and scrapes never show up as observed traffic.
 */
export function createAdminServer(metrics: Metrics, status: AdminStatus): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return send(
        res,
        405,
        'application/json',
        JSON.stringify({ statusCode: 405, error: 'Method Not Allowed', message: 'admin endpoints accept GET' }),
      );
    switch (path) {
      case '/healthz':
        return send(res, 200, 'application/json', JSON.stringify({ status: 'ok' }));
      case '/readyz': {
        const reasons = status.notReady();
        return send(
          res,
          reasons.length === 0 ? 200 : 503,
          'application/json',
          JSON.stringify(reasons.length === 0 ? { status: 'ready' } : { status: 'not ready', reasons }),
        );
      }
      case '/metrics':
        return send(res, 200, 'text/plain; version=0.0.4; charset=utf-8', metrics.render());
      default:
        return send(
          res,
          404,
          'application/json',
          JSON.stringify({
            statusCode: 404,
            error: 'Not Found',
            message: 'admin endpoints: /healthz, /readyz, /metrics',
          }),
        );
    }
  });
}

function send(res: http.ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Listen and resolve with the bound address. */
export function listen(server: http.Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
