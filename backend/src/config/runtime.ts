import type { Logger } from 'pino';
import type { BackendConfig } from './config';

/** Injection token of the `Runtime`. */
export const RUNTIME = Symbol('spectator.runtime');

/** What the app module needs from the boot sequence: the config, the resolved database URL, the logger. */
export interface Runtime {
  config: BackendConfig;
  databaseUrl: string;
  log: Logger;
}
