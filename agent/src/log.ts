import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths pino censors wherever they appear in a log object. The token is the only secret the agent
 * holds; header-shaped objects are listed too so a careless `log.info({ headers })` cannot leak one.
 */
const REDACT_PATHS = ['token', '*.token', 'authorization', '*.authorization', 'headers.authorization', 'headers.cookie', '*.headers.authorization', '*.headers.cookie'];

/**
 * The one root logger of an agent. Modules take `root.child({ module })`.
 * @param level pino level, default `info`.
 * @param destination where JSON lines go; default stdout.
 */
export function createRootLogger(level = 'info', destination?: DestinationStream): Logger {
  return pino({ level, base: { name: 'spectator-agent' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination ?? pino.destination(1));
}
