import pino, { type DestinationStream, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';

export type { Logger } from 'pino';

/** How log lines look: one JSON object per line (for machines), or readable lines (for people). */
export type LogFormat = 'json' | 'pretty';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

/**
 * Paths pino censors wherever they appear in a log object. The token is the only secret the agent
 * holds; header-shaped objects are listed too so a careless `log.info({ headers })` cannot leak one.
 */
const REDACT_PATHS = [
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
];

/** The format when none is asked for: readable on a terminal, JSON when stdout goes to a file, a pipe or a log collector. */
export function defaultLogFormat(stdoutIsTty = process.stdout.isTTY === true): LogFormat {
  return stdoutIsTty ? 'pretty' : 'json';
}

/**
 * The one root logger of an agent. Modules take `root.child({ module })`.
 * @param level pino level, default `info`.
 * @param destination where JSON lines go; default stdout.
 * @param format `pretty` writes readable lines (time, level, module, message, then the fields),
 *   coloured on a terminal; default JSON lines.
 */
export function createRootLogger(level = 'info', destination?: DestinationStream, format: LogFormat = 'json'): Logger {
  const options = { level, base: { name: 'spectator-agent' }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  const out = destination ?? pino.destination(1);
  if (format === 'json') return pino(options, out);
  // Each JSON line is rewritten as it is written: as synchronous as JSON, no worker thread.
  const prettify = prettyFactory({
    colorize: destination === undefined && process.stdout.isTTY === true,
    singleLine: true,
    ignore: 'pid,hostname,name,module',
    messageFormat: '{if module}{module}: {end}{msg}',
    translateTime: 'SYS:HH:MM:ss.l',
  });
  return pino(options, { write: (line: string) => out.write(prettify(line)) });
}
