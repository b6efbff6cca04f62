import type { NextFunction, Request, Response } from 'express';
import { apiError } from './error.filter';

/** The media types a management API body may have: JSON, and YAML (read only by the OpenAPI import). */
const BODY_MEDIA_TYPES = (yaml: readonly string[]): string[] => ['application/json', 'application/*+json', ...yaml];

/**
 * Express middleware for the management API: a request that carries a body in another media type
 * than JSON (or YAML) is answered 415, naming the type it got. Without it, `curl -d '{…}'` (which
 * sends `application/x-www-form-urlencoded`) had its JSON read as one form field name, and the
 * answer listed every field as missing plus `property {"captureId":… should not exist`.
 */
export function requireJsonBodies(
  yamlMediaTypes: readonly string[],
): (request: Request, response: Response, next: NextFunction) => void {
  const accepted = BODY_MEDIA_TYPES(yamlMediaTypes);
  return (request, response, next) => {
    if (!request.path.startsWith('/api/') || !hasBody(request) || request.is(accepted)) return next();
    const got = request.headers['content-type'];
    const message = got
      ? `content-type must be application/json (got ${got.split(';')[0]?.trim()}); with curl, add -H 'content-type: application/json'`
      : "content-type is missing: send the body as application/json (with curl, add -H 'content-type: application/json')";
    response.status(415).json(apiError(415, message));
  };
}

/** A body of at least one byte is coming (type-is counts `content-length: 0`, which fetch sends for a bare POST, as a body). */
function hasBody(request: Request): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > 0);
}
