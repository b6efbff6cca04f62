import fs from 'node:fs';
import path from 'node:path';

/** Set by the one-file builds (bundle.js, esbuild `define`), which may run far from any package.json. */
declare const SPECTATOR_AGENT_VERSION: string | undefined;

let cached: string | null = null;

/**
 * The agent's version: built into a one-file build, else from its package.json (found from here
 * upwards, so it works from src and dist).
 */
export function agentVersion(): string {
  if (cached !== null) return cached;
  if (typeof SPECTATOR_AGENT_VERSION === 'string') return (cached = SPECTATOR_AGENT_VERSION);
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@spectator/agent') return (cached = pkg.version ?? '0.0.0');
    }
    if (path.dirname(dir) === dir) return (cached = '0.0.0');
  }
}
