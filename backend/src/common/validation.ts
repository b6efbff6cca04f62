import {
  type ArgumentMetadata,
  ParseUUIDPipe,
  type PipeTransform,
  ValidationPipe,
  type ValidationError,
} from '@nestjs/common';
import { badInput } from './errors';

/** Flattens class-validator errors into one message that names each bad field by its full path. */
export function describeValidationErrors(errors: readonly ValidationError[], parent = ''): string[] {
  const messages: string[] = [];
  for (const error of errors) {
    const field =
      parent === ''
        ? error.property
        : /^\d+$/.test(error.property)
          ? `${parent}[${error.property}]`
          : `${parent}.${error.property}`;
    for (const constraint of constraintsToReport(error)) {
      // class-validator starts its messages with the bare property name; show the full path instead.
      const text = constraint.startsWith(`${error.property} `)
        ? constraint.slice(error.property.length + 1)
        : constraint;
      messages.push(`${field} ${text}`);
    }
    messages.push(...describeValidationErrors(error.children ?? [], field));
  }
  return messages;
}

// When a value is not of its type (missing, `limit=abc`), its size limits say nothing more: `{}` was
// answered `endpoints must contain no more than 500 elements; … at least 1 elements; … must be an
// array`, and `?limit=abc` with three messages. Only the type is reported then.
const TYPE_CONSTRAINTS: ReadonlySet<string> = new Set([
  'isArray',
  'isString',
  'isInt',
  'isNumber',
  'isBoolean',
  'isUuid',
  'isIn',
  'isEnum',
  'isObject',
  'isUrl',
  'isDateString',
  'isIso8601',
]);

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
 * Deepest nesting of arrays and objects accepted in a body, query or YAML document. Deeper input
 * overflowed the stack in class-transformer (a 500); shapes nest at most 256 levels, and their
 * JSON Schemas take about three JSON levels per shape level, so real input stays far below.
 */
export const MAX_INPUT_DEPTH = 1_000;

/**
 * What makes a JSON-like value unacceptable before validation, as a message, or null: a NUL
 * character in a key or a string (PostgreSQL cannot keep one in text or jsonb), or nesting deeper
 * than {@link MAX_INPUT_DEPTH}. `name` names the value (`body`, `query`); the message names the
 * field (`endpoints[0].description`). Iterative: a body may nest deeply.
 */
export function inputProblem(value: unknown, name: string, root = ''): string | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: root, depth: 0 }];
  while (stack.length > 0) {
    const next = stack.pop()!;
    const where = next.path === '' ? name : next.path;
    if (typeof next.value === 'string') {
      if (next.value.includes('\u0000')) return `${where} must not contain NUL characters`;
    } else if (next.value !== null && typeof next.value === 'object') {
      if (next.depth >= MAX_INPUT_DEPTH) {
        return `${name} is nested more than ${MAX_INPUT_DEPTH} levels deep (the limit), at ${where.length > 80 ? `${where.slice(0, 80)}…` : where}`;
      }
      const depth = next.depth + 1;
      if (Array.isArray(next.value)) {
        next.value.forEach((item, index) => stack.push({ value: item, path: `${next.path}[${index}]`, depth }));
      } else {
        for (const [key, item] of Object.entries(next.value)) {
          const path = next.path === '' ? key : `${next.path}.${key}`;
          if (key.includes('\u0000')) return `${path} must not contain NUL characters`;
          stack.push({ value: item, path, depth });
        }
      }
    }
  }
  return null;
}

/**
 * The first global pipe: a NUL character in a body, query value or path parameter, or a body
 * nested too deep, is a 400 naming where. PostgreSQL cannot keep a NUL in text or jsonb, and the
 * insert or query failed with a 500 (a token name, a proposal title, a description,
 * `?pullRequest=%00`); a body nested 10^5 deep overflowed the stack in class-transformer (a 500).
 * Agents' batches are checked by the wire validation.
 */
export class RejectHostileInput implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    // Custom parameters (the resolved project, the caller) are the service's own objects.
    if (metadata.type === 'custom') return value;
    const problem = inputProblem(value, metadata.type, metadata.data ?? '');
    if (problem !== null) throw badInput(problem);
    return value;
  }
}
