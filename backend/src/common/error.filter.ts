import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import type { ApiError } from '@spectator/shared';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { DomainError, HTTP_REASONS, httpStatusOf } from './errors';
import { isDatabaseUnavailable } from './pg-errors';

/**
 * Maps every error to the standard body `{statusCode, error, message}`; PostgreSQL unavailable becomes a
 * 503 with `Retry-After`, other unknown errors a logged 500.
 */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  constructor(private readonly log: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const body = this.toApiError(exception);
    if (body.statusCode === 503)
      this.log.warn(
        { err: exception },
        exception instanceof DomainError ? `request failed: ${body.message}` : 'request failed: database unavailable',
      );
    else if (body.statusCode >= 500) this.log.error({ err: exception }, 'request failed');
    if (response.headersSent) return;
    if (body.statusCode === 503) response.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
    response.status(body.statusCode).json(body);
  }

  toApiError(exception: unknown): ApiError {
    if (exception instanceof DomainError) return apiError(httpStatusOf(exception.code), exception.message);
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      // Nest maps body-parser's SyntaxError to a 400 carrying the parser's words; say what it means.
      if ((exception.cause as { type?: unknown } | undefined)?.type === 'entity.parse.failed')
        return apiError(400, 'body is not valid JSON');
      const payload = exception.getResponse();
      const message =
        typeof payload === 'string'
          ? payload
          : (messageOf((payload as { message?: unknown }).message) ?? exception.message);
      return apiError(status, message);
    }
    // body-parser errors carry `status` and `type`; their messages are safe to show.
    const bodyError = exception as { status?: unknown; type?: unknown; message?: unknown };
    if (
      typeof bodyError.status === 'number' &&
      typeof bodyError.type === 'string' &&
      bodyError.status >= 400 &&
      bodyError.status < 500
    ) {
      const message = bodyError.type === 'entity.parse.failed' ? 'body is not valid JSON' : String(bodyError.message);
      return apiError(bodyError.status, message);
    }
    return serverError(exception);
  }
}

/** Seconds a client is told to wait before retrying when the database is unavailable. */
export const RETRY_AFTER_SECONDS = 5;

/** An error we did not expect: 503 when PostgreSQL is unavailable (worth retrying), else 500. */
export function serverError(exception: unknown): ApiError {
  return isDatabaseUnavailable(exception)
    ? apiError(503, 'database unavailable: try again shortly')
    : apiError(500, 'internal error');
}

function messageOf(message: unknown): string | undefined {
  if (Array.isArray(message)) return message.map(String).join('; ');
  return typeof message === 'string' ? message : undefined;
}

/** The standard error body. */
export function apiError(statusCode: number, message: string): ApiError {
  return { statusCode, error: HTTP_REASONS[statusCode] ?? 'Error', message };
}
