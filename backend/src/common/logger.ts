import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';

/** The root pino logger of one backend instance; modules take `child({ module })`. */
export function createRootLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'spectator-backend' },
    redact: ['req.headers.authorization', 'token', 'adminToken'],
  });
}

/** Nest's logger interface over pino, so framework messages land in the same structured log. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly pinoLogger: Logger) {}

  log(message: unknown, context?: string): void {
    this.write('info', message, context);
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.pinoLogger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string): void {
    this.write('trace', message, context);
  }

  private write(level: 'info' | 'warn' | 'debug' | 'trace', message: unknown, context?: string): void {
    if (typeof message === 'object' && message !== null) this.pinoLogger[level]({ context, ...message }, 'nest');
    else this.pinoLogger[level]({ context }, String(message));
  }
}
