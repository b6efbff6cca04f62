import type { NextFunction, Request, Response } from 'express';
import { apiError } from './error.filter';

/**
 * Express middleware mounted at `/api`: under it only `/api/v1` (the management API) and
 * `/api/docs` (its reference) exist. Anything else, such as `/api/projects` with the version
 * forgotten, is answered with the standard JSON error body and where the API is, instead of
 * Express's HTML "Cannot GET" page, which a script piping the answer to `jq` cannot read.
 */
export function apiVersionHint(request: Request, response: Response, next: NextFunction): void {
  if (/^\/(v1|docs)(\/|$)/.test(request.path)) return next();
  const path = request.originalUrl.split('?')[0] ?? request.originalUrl;
  response
    .status(404)
    .json(
      apiError(404, `Cannot ${request.method} ${path}: the management API is under /api/v1 (e.g. /api/v1/projects)`),
    );
}
