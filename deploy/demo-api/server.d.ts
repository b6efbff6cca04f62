// Types of server.js, for TypeScript callers (tests, the `npm start` script).
import type { Server } from 'node:http';

/** A demo posts API server, not yet listening; posts are kept in memory, ids from 1. */
export function createDemoApi(): Server;

/** Start a demo API and wait until it listens. Port 0 (the default) picks a free port; host defaults to 127.0.0.1. */
export function startDemoApi(options?: { port?: number; host?: string }): Promise<{
  server: Server;
  port: number;
  url: string;
  close: () => Promise<void>;
}>;

/** Port and host from `--port N` / `--port=N` / `PORT` and `--host H` / `HOST` (default 3000, 127.0.0.1). Throws naming what is wrong. */
export function parseOptions(argv: string[], env: Record<string, string | undefined>): { port: number; host: string };

/** Largest request body read, in bytes. */
export const MAX_BODY_BYTES: number;
