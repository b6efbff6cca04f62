import { type ArgumentMetadata, ParseUUIDPipe, type PipeTransform, ValidationPipe, type ValidationError } from '@nestjs/common';
import { badInput } from './errors';

/** Flattens class-validator errors into one message that names each bad field by its full path. */
export function describeValidationErrors(errors: readonly ValidationError[], parent = ''): string[] {
  const messages: string[] = [];
  for (const error of errors) {
    const field = parent === '' ? error.property : /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : `${parent}.${error.property}`;
    for (const constraint of constraintsToReport(error)) {
      // class-validator starts its messages with the bare property name; show the full path instead.
      const text = constraint.startsWith(`${error.property} `) ? constraint.slice(error.property.length + 1) : constraint;
      messages.push(`${field} ${text}`);
    }
    messages.push(...describeValidationErrors(error.children ?? [], field));
  }
  return messages;
}

// When a value is not of its type (missing, `limit=abc`), its size limits say nothing more: `{}` was
// answered `endpoints must contain no more than 500 elements; … at least 1 elements; … must be an
// array`, and `?limit=abc` with three messages. Only the type is reported then.
const TYPE_CONSTRAINTS: ReadonlySet<string> = new Set(['isArray', 'isString', 'isInt', 'isNumber', 'isBoolean', 'isUuid', 'isIn', 'isEnum', 'isObject', 'isUrl', 'isDateString', 'isIso8601']);

/** The messages of one field: only its type's when it is not of its type, else every broken rule. */
function constraintsToReport(error: ValidationError): string[] {
  const all = Object.entries(error.constraints ?? {});
  const types = all.filter(([name]) => TYPE_CONSTRAINTS.has(name));
  return (types.length > 0 ? types : all).map(([, message]) => message);
}

/** The global pipe: whitelist, reject unknown fields, transform to DTO classes, 400 naming the field. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) => badInput(describeValidationErrors(errors).join('; ')),
  });
}

/** A pipe for a UUID route parameter: 400 naming the parameter instead of a database error. */
export function uuidPipe(name: string): ParseUUIDPipe {
  return new ParseUUIDPipe({ exceptionFactory: () => badInput(`${name} must be a UUID`) });
}

/**
 * Where the first NUL character is in a JSON-like value (a key or a string), as a field path
 * (`endpoints[0].description`), or null. Iterative: a body may nest deeply.
 */
export function nulCharacterPath(value: unknown, root: string): string | null {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: root }];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (typeof next.value === 'string') {
      if (next.value.includes('\u0000')) return next.path;
    } else if (Array.isArray(next.value)) {
      next.value.forEach((item, index) => stack.push({ value: item, path: `${next.path}[${index}]` }));
    } else if (next.value !== null && typeof next.value === 'object') {
      for (const [key, item] of Object.entries(next.value)) {
        const path = next.path === '' ? key : `${next.path}.${key}`;
        if (key.includes('\u0000')) return path;
        stack.push({ value: item, path });
      }
    }
  }
  return null;
}

/**
 * The first global pipe: a NUL character in a body, query value or path parameter is a 400 naming
 * where it is. PostgreSQL cannot keep one in text or jsonb, and the insert or query failed with a
 * 500 (a token name, a proposal title, a description, `?pullRequest=%00`). Agents' batches are
 * checked the same way by the wire validation.
 */
export class RejectNulCharacters implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    // Custom parameters (the resolved project, the caller) are the service's own objects.
    if (metadata.type === 'custom') return value;
    const path = nulCharacterPath(value, metadata.data ?? '');
    if (path !== null) throw badInput(`${path === '' ? metadata.type : path} must not contain NUL characters`);
    return value;
  }
}
