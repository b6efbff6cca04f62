// Minimal types for the two benchmark peers that ship none.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    method?: string;
    body?: string | Buffer;
    headers?: Record<string, string>;
    pipelining?: number;
  }
  interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p99: number;
  }
  interface Result {
    requests: Histogram & { total: number };
    latency: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
  }
  interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void;
  }
  function autocannon(options: Options): Instance;
  export = autocannon;
}

declare module 'http-proxy' {
  import type http from 'node:http';
  interface ProxyServer {
    web(req: http.IncomingMessage, res: http.ServerResponse, options: { target: string }): void;
    on(event: 'error', listener: (err: Error, req: http.IncomingMessage, res: http.ServerResponse) => void): void;
  }
  const httpProxy: { createProxyServer(options: { agent?: http.Agent; xfwd?: boolean }): ProxyServer };
  export = httpProxy;
}
