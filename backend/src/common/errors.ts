/** Domain errors: services throw these; one global filter maps each code to HTTP. */
export enum ErrorCode {
  BadInput = 'BadInput',
  Unauthenticated = 'Unauthenticated',
  Forbidden = 'Forbidden',
  ProjectNotFound = 'ProjectNotFound',
  ProjectExists = 'ProjectExists',
  CaptureNotFound = 'CaptureNotFound',
  EndpointNotFound = 'EndpointNotFound',
  ProposalNotFound = 'ProposalNotFound',
  WebhookNotFound = 'WebhookNotFound',
  PathHintNotFound = 'PathHintNotFound',
  /** A consumer pseudonym without a label. */
  ConsumerNotFound = 'ConsumerNotFound',
  /** No environment row (build, pull request run) of that name. */
  BuildNotFound = 'BuildNotFound',
  /** A route switched off by configuration (`/metrics` without SPECTATOR_METRICS_TOKEN). */
  NotServed = 'NotServed',
  Conflict = 'Conflict',
  /** The identity provider could not be reached or answered something unusable. */
  ProviderUnavailable = 'ProviderUnavailable',
  /** Evidence a read needs is still queued and could not be folded in time (ask again). */
  FoldPending = 'FoldPending',
}

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** Compile-time exhaustiveness: reaching this means a case was forgotten. */
export function assertUnreachable(value: never): never {
  throw new Error(`unreachable: ${String(value)}`);
}

/** The HTTP status of a domain error code. */
export function httpStatusOf(code: ErrorCode): number {
  switch (code) {
    case ErrorCode.BadInput:
      return 400;
    case ErrorCode.Unauthenticated:
      return 401;
    case ErrorCode.Forbidden:
      return 403;
    case ErrorCode.ProjectNotFound:
    case ErrorCode.CaptureNotFound:
    case ErrorCode.EndpointNotFound:
    case ErrorCode.ProposalNotFound:
    case ErrorCode.WebhookNotFound:
    case ErrorCode.PathHintNotFound:
    case ErrorCode.ConsumerNotFound:
    case ErrorCode.BuildNotFound:
    case ErrorCode.NotServed:
      return 404;
    case ErrorCode.ProjectExists:
    case ErrorCode.Conflict:
      return 409;
    case ErrorCode.ProviderUnavailable:
    case ErrorCode.FoldPending:
      return 503;
    default:
      return assertUnreachable(code);
  }
}

export const HTTP_REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export const badInput = (message: string): DomainError => new DomainError(ErrorCode.BadInput, message);
