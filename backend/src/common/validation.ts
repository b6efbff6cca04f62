import { ParseUUIDPipe, ValidationPipe, type ValidationError } from '@nestjs/common';
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

// Limits on a value's size say nothing when the value is missing: `{}` was answered with
// `endpoints must contain no more than 500 elements; … at least 1 elements; … must be an array`.
const SIZE_CONSTRAINTS: ReadonlySet<string> = new Set(['arrayMinSize', 'arrayMaxSize', 'arrayNotEmpty', 'minLength', 'maxLength', 'min', 'max', 'isNotEmpty']);

/** The messages of one field: for a missing field only what it must be, not its size limits. */
function constraintsToReport(error: ValidationError): string[] {
  const all = Object.entries(error.constraints ?? {});
  if (error.value !== undefined) return all.map(([, message]) => message);
  const kinds = all.filter(([name]) => !SIZE_CONSTRAINTS.has(name));
  return (kinds.length > 0 ? kinds : all).map(([, message]) => message);
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
