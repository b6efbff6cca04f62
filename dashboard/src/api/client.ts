import type {
  AuditPageResponse,
  AuthConfigResponse,
  GroupRoleResponse,
  MemberResponse,
  MembersResponse,
  ProjectRole,
  OpenApiImportResponse,
  WhoAmIResponse,
  AgentResponse,
  ApiError as ApiErrorBody,
  BlastRadiusResponse,
  ConsumerLabelResponse,
  ConsumersResponse,
  EndpointConsumersResponse,
  DeprecationRequest,
  DeprecationResponse,
  MatrixKind,
  OrphansResponse,
  SafeToRemoveResponse,
  UsageResponse,
  CaptureResponse,
  CaptureRuntimeResponse,
  ChangelogResponse,
  CompareResponse,
  DiffOriginsResponse,
  DiffResponse,
  DocumentationRequest,
  DocumentationResponse,
  LogoutResponse,
  EndpointResponse,
  ObservedEndpointResponse,
  PathHintCreatedResponse,
  PathHintResponse,
  ProjectResponse,
  ProposalResponse,
  RuntimeResponse,
  DriftCellResponse,
  TokenResponse,
  TokenScope,
  UndocumentedEndpointResponse,
  VersionShareResponse,
  VersionMatrixResponse,
  EnvironmentKind,
  WebhookDeliveryResponse,
  WebhookFormat,
  WebhookResponse,
} from '@spectator/shared';
import { ROUTES } from '@spectator/shared';
import type { EndpointVersionResponse } from './types';

/** A failed call to the management API, with the backend's status and message (or status 0 when unreachable). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly path: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The token is missing, wrong or revoked: signing in again is the fix. */
  get unauthorized(): boolean {
    return this.status === 401;
  }
}

export interface ApiClientOptions {
  /** Origin of the backend, `''` for the page's own origin (the backend serves the dashboard). */
  baseUrl?: string;
  /** A bearer token; null for a person signed in through single sign-on (the session cookie goes along). */
  token: string | null;
  /** A cookie session's CSRF value (`GET /me`), sent as `X-CSRF-Token` on every change. */
  csrfToken?: string;
  /** Injected in tests; defaults to the global `fetch`. */
  fetch?: typeof fetch;
}

/** Reads the message of an error body: NestJS sends a string, class-validator an array of them. */
function errorMessage(body: unknown, fallback: string): string {
  if (body && typeof body === 'object' && 'message' in body) {
    const message = (body as Partial<ApiErrorBody> & { message: unknown }).message;
    if (Array.isArray(message)) return message.join('; ');
    if (typeof message === 'string' && message) return message;
  }
  return fallback;
}

/**
 * The one typed client of the management API (`/api/v1`, DESIGN.md). Every method resolves with the
 * shared wire type or rejects with an `ApiError` whose message can be shown to a person as is.
 */
export function createApiClient(options: ApiClientOptions) {
  const baseUrl = options.baseUrl ?? '';
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const project = (slug: string) => `/projects/${encodeURIComponent(slug)}`;

  /** A call with a JSON body, or with `raw` text sent as is under its own media type. */
  async function request<T>(method: string, path: string, body?: unknown, raw?: { contentType: string }): Promise<T> {
    const url = `${baseUrl}${ROUTES.apiPrefix}${path}`;
    let response: Response;
    try {
      response = await doFetch(url, {
        method,
        headers: {
          Accept: 'application/json',
          ...(options.token === null ? {} : { Authorization: `Bearer ${options.token}` }),
          ...(method !== 'GET' && options.csrfToken ? { 'X-CSRF-Token': options.csrfToken } : {}),
          ...(body === undefined ? {} : { 'Content-Type': raw?.contentType ?? 'application/json' }),
        },
        ...(body === undefined ? {} : { body: raw ? String(body) : JSON.stringify(body) }),
      });
    } catch {
      throw new ApiError(0, 'Cannot reach the Spectator backend. Check that it is running, then retry.', path);
    }
    const text = await response.text();
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        if (response.ok)
          throw new ApiError(response.status, `The backend answered ${path} with something that is not JSON.`, path);
      }
    }
    if (!response.ok) {
      const fallback =
        response.status === 401
          ? 'Your token was not accepted. Sign in again.'
          : `${response.status} ${response.statusText}`.trim();
      throw new ApiError(response.status, errorMessage(parsed, fallback), path);
    }
    return parsed as T;
  }

  const get = <T>(path: string) => request<T>('GET', path);

  /** A GET whose answer is text (Markdown, a feed), not JSON; errors as `request`'s. */
  async function getText(path: string): Promise<string> {
    const url = `${baseUrl}${ROUTES.apiPrefix}${path}`;
    let response: Response;
    try {
      response = await doFetch(url, {
        headers: options.token === null ? {} : { Authorization: `Bearer ${options.token}` },
      });
    } catch {
      throw new ApiError(0, 'Cannot reach the Spectator backend. Check that it is running, then retry.', path);
    }
    const text = await response.text();
    if (response.ok) return text;
    let parsed: unknown = undefined;
    try {
      parsed = JSON.parse(text);
    } catch {
      // the status says it
    }
    throw new ApiError(response.status, errorMessage(parsed, `${response.status} ${response.statusText}`.trim()), path);
  }
  const query = (params: Record<string, string | undefined>) => {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, value);
    const text = search.toString();
    return text ? `?${text}` : '';
  };

  return {
    token: options.token,
    /** Who the token or person is (name, scope, project): the dashboard offers only the actions its scope allows. */
    me: () => get<WhoAmIResponse>('/me'),
    /** Who the caller is in a project: for a person, their role there. */
    meIn: (p: string) => get<WhoAmIResponse>(`${project(p)}/me`),
    /** How people sign in here (single sign-on or tokens only). */
    authConfig: () => get<AuthConfigResponse>('/auth/config'),
    /** Ends a person's session (their cookie is cleared). */
    signOut: () => request<LogoutResponse | null>('POST', '/auth/logout'),
    project: (p: string) => get<ProjectResponse>(project(p)),
    /** Project settings (`fourEyes`). */
    updateProject: (p: string, body: { fourEyes?: boolean }) => request<ProjectResponse>('PATCH', project(p), body),
    members: (p: string) => get<MembersResponse>(`${project(p)}/members`),
    setMember: (p: string, body: { email: string; role: ProjectRole }) =>
      request<MemberResponse>('PUT', `${project(p)}/members`, body),
    removeMember: (p: string, userId: string) =>
      request<unknown>('DELETE', `${project(p)}/members/${encodeURIComponent(userId)}`),
    setGroupRoles: (p: string, groupRoles: GroupRoleResponse[]) =>
      request<GroupRoleResponse[]>('PUT', `${project(p)}/group-roles`, { groupRoles }),
    /** One page of the audit log, newest first. */
    audit: (p: string, params: { limit?: number; before?: string; action?: string; actor?: string } = {}) =>
      get<AuditPageResponse>(
        `${project(p)}/audit${query({ limit: params.limit?.toString(), before: params.before, action: params.action, actor: params.actor })}`,
      ),
    projects: () => get<ProjectResponse[]>('/projects'),
    /** Creates a project (the bootstrap admin token only). */
    createProject: (body: { slug: string; name: string }) => request<ProjectResponse>('POST', '/projects', body),
    captures: (p: string) => get<CaptureResponse[]>(`${project(p)}/captures`),
    undocumented: (p: string, captureId: string) =>
      get<UndocumentedEndpointResponse[]>(`${project(p)}/captures/${encodeURIComponent(captureId)}/undocumented`),
    /** Every endpoint's runtime in a capture's environment row (its pull request, its build), undocumented ones too. */
    captureRuntime: (p: string, captureId: string) =>
      get<CaptureRuntimeResponse>(`${project(p)}/captures/${encodeURIComponent(captureId)}/runtime`),
    /** How each version of an endpoint named by method and path (documented or not) behaves in one environment. */
    routeRuntime: (
      p: string,
      params: { method: string; path: string; environment: EnvironmentKind; since?: string; build?: string },
    ) => get<RuntimeResponse>(`${project(p)}/runtime${query(params)}`),
    diffs: (p: string, captureId: string) =>
      get<DiffResponse[]>(`${project(p)}/captures/${encodeURIComponent(captureId)}/diffs`),
    /** Where the traffic of each diff of one page of a capture's diffs was first seen (`after`: the key before it). */
    diffOrigins: (p: string, captureId: string, page: { after?: string; limit: number }) =>
      get<DiffOriginsResponse[]>(
        `${project(p)}/captures/${encodeURIComponent(captureId)}/diffs/origins${query({ after: page.after, limit: String(page.limit) })}`,
      ),
    observed: (p: string, captureId: string, method: string, path: string) =>
      get<ObservedEndpointResponse>(
        `${project(p)}/captures/${encodeURIComponent(captureId)}/observed${query({ method, path })}`,
      ),
    commitDocumentation: (p: string, body: DocumentationRequest) =>
      request<DocumentationResponse>('POST', `${project(p)}/documentation`, body),
    /** Templates users stated ("this segment is a parameter"). */
    pathHints: (p: string) => get<PathHintResponse[]>(`${project(p)}/path-hints`),
    /** States a template: what is stored under its literal paths is merged into it at once. */
    addPathHint: (p: string, template: string) =>
      request<PathHintCreatedResponse>('POST', `${project(p)}/path-hints`, { template }),
    endpoints: (p: string) => get<EndpointResponse[]>(`${project(p)}/endpoints`),
    endpointVersions: (p: string, endpointId: string) =>
      get<EndpointVersionResponse[]>(`${project(p)}/endpoints/${encodeURIComponent(endpointId)}/versions`),
    /** One page of the versions matrix: rows of `kind` (all kinds when absent), `limit` rows (the backend allows 1-100), after `cursor`. */
    versions: (p: string, params: { kind?: EnvironmentKind; limit?: number; cursor?: string } = {}) =>
      get<VersionMatrixResponse>(
        `${project(p)}/versions${query({ kind: params.kind, limit: params.limit?.toString(), cursor: params.cursor })}`,
      ),
    /** Every drifting cell of the matrix with where its drift began. */
    drift: (p: string) => get<DriftCellResponse[]>(`${project(p)}/drift`),
    /** How each version of an endpoint behaves in one environment (one build of it) since `since` (default the last 24 hours). */
    runtime: (
      p: string,
      endpointId: string,
      params: { environment: EnvironmentKind; since?: string; build?: string },
    ) => get<RuntimeResponse>(`${project(p)}/endpoints/${encodeURIComponent(endpointId)}/runtime${query(params)}`),
    /** Which versions an environment's (a build's) traffic ran on since `since`: every endpoint together over time, and per endpoint. */
    versionShare: (p: string, params: { environment: EnvironmentKind; since?: string; build?: string }) =>
      get<VersionShareResponse>(`${project(p)}/runtime/share${query(params)}`),
    proposals: (p: string) => get<ProposalResponse[]>(`${project(p)}/proposals`),
    proposal: (p: string, id: string) => get<ProposalResponse>(`${project(p)}/proposals/${encodeURIComponent(id)}`),
    /** Who a proposal's breaking changes break: the consumers that called a broken part (production, 30 days by default). */
    blastRadius: (p: string, id: string, params: { environment?: MatrixKind; days?: number } = {}) =>
      get<BlastRadiusResponse>(
        `${project(p)}/proposals/${encodeURIComponent(id)}/blast-radius${query({ environment: params.environment, days: params.days?.toString() })}`,
      ),
    /** Who one capture's breaking diffs break (production, 30 days by default). */
    captureBlastRadius: (p: string, captureId: string) =>
      get<BlastRadiusResponse>(`${project(p)}/captures/${encodeURIComponent(captureId)}/blast-radius`),
    /** Who called one endpoint, per environment (every one, or one, or one build of it) and status, in the last `days` days. */
    endpointConsumers: (
      p: string,
      endpointId: string,
      params: { environment?: MatrixKind; build?: string; days?: number } = {},
    ) =>
      get<EndpointConsumersResponse>(
        `${project(p)}/endpoints/${encodeURIComponent(endpointId)}/consumers${query({ ...params, days: params.days?.toString() })}`,
      ),
    /** Every consumer of an environment (of one of its builds) in the last `days` days, by pseudonym and label. */
    consumers: (p: string, params: { environment?: MatrixKind; build?: string; days?: number } = {}) =>
      get<ConsumersResponse>(`${project(p)}/consumers${query({ ...params, days: params.days?.toString() })}`),
    /** Names a consumer pseudonym ("mobile app 5.x"). */
    labelConsumer: (p: string, consumer: string, label: string) =>
      request<ConsumerLabelResponse>('PUT', `${project(p)}/consumers/${encodeURIComponent(consumer)}/label`, { label }),
    unlabelConsumer: (p: string, consumer: string) =>
      request<unknown>('DELETE', `${project(p)}/consumers/${encodeURIComponent(consumer)}/label`),
    /**
     * When each endpoint, status, field, query parameter and header was last seen in one environment:
     * by path then method, at most `limit` endpoints after `after` (`method path` of the last one seen), or all.
     */
    usage: (p: string, params: { environment: MatrixKind; build?: string; limit?: number; after?: string }) =>
      get<UsageResponse>(`${project(p)}/usage${query({ ...params, limit: params.limit?.toString() })}`),
    /** Documented endpoints not seen in the window (orphans), and what is deprecated yet still called (zombies), of an environment or one of its builds. */
    orphans: (p: string, params: { environment?: MatrixKind; build?: string; days?: number } = {}) =>
      get<OrphansResponse>(`${project(p)}/usage/orphans${query({ ...params, days: params.days?.toString() })}`),
    /** What production did not call in the window, with the evidence, and a removal proposal drafted from it. */
    safeToRemove: (p: string, params: { days?: number } = {}) =>
      get<SafeToRemoveResponse>(`${project(p)}/usage/safe-to-remove${query({ days: params.days?.toString() })}`),
    deprecations: (p: string) => get<DeprecationResponse[]>(`${project(p)}/deprecations`),
    /** Marks an endpoint, or one of its parameters, headers or fields, deprecated (idempotent). */
    markDeprecated: (p: string, mark: DeprecationRequest) =>
      request<unknown>('POST', `${project(p)}/deprecations`, mark),
    unmarkDeprecated: (p: string, mark: DeprecationRequest) =>
      request<unknown>('DELETE', `${project(p)}/deprecations`, mark),
    /** Proposes removing documented endpoints: approving it writes each one's next major version, marked removed. */
    proposeRemoval: (
      p: string,
      body: { title: string; description?: string; endpoints: ReadonlyArray<{ method: string; path: string }> },
    ) =>
      request<ProposalResponse>('POST', `${project(p)}/proposals`, {
        ...body,
        endpoints: body.endpoints.map(({ method, path }) => ({ method, path, remove: true })),
      }),
    approveProposal: (p: string, id: string) =>
      request<ProposalResponse>('POST', `${project(p)}/proposals/${encodeURIComponent(id)}/approve`, {}),
    tokens: (p: string) => get<TokenResponse[]>(`${project(p)}/tokens`),
    createToken: (
      p: string,
      body: { name: string; scope: TokenScope; environments?: EnvironmentKind[]; expiresAt?: string },
    ) => request<TokenResponse>('POST', `${project(p)}/tokens`, body),
    revokeToken: (p: string, id: string) =>
      request<unknown>('DELETE', `${project(p)}/tokens/${encodeURIComponent(id)}`),
    agents: (p: string) => get<AgentResponse[]>(`${project(p)}/agents`),
    webhooks: (p: string) => get<WebhookResponse[]>(`${project(p)}/webhooks`),
    createWebhook: (p: string, body: { url: string; format?: WebhookFormat }) =>
      request<WebhookResponse>('POST', `${project(p)}/webhooks`, body),
    deleteWebhook: (p: string, id: string) =>
      request<unknown>('DELETE', `${project(p)}/webhooks/${encodeURIComponent(id)}`),
    /** A webhook's delivery log, newest first, at most `limit` entries. */
    webhookDeliveries: (p: string, id: string, limit: number) =>
      get<WebhookDeliveryResponse[]>(
        `${project(p)}/webhooks/${encodeURIComponent(id)}/deliveries${query({ limit: String(limit) })}`,
      ),
    /**
     * Imports an OpenAPI 3.0/3.1 document (its text, JSON or YAML) as a proposal; `approve` approves it at once.
     */
    importOpenApi: (p: string, text: string, options: { approve: boolean }) =>
      request<OpenApiImportResponse>(
        'POST',
        `${project(p)}/openapi/import${query({ approve: options.approve ? 'true' : undefined })}`,
        text,
        {
          contentType: /^\s*[{[]/.test(text) ? 'application/json' : 'application/yaml',
        },
      ),
    /** The OpenAPI 3.1 export of the documented endpoints, as parsed JSON. */
    /** What clients of `from` would see change if `to` replaced it. */
    compare: (
      p: string,
      params: { from: EnvironmentKind; to: EnvironmentKind; fromPullRequest?: string; toPullRequest?: string },
    ) => get<CompareResponse>(`${project(p)}/compare${query(params)}`),
    openapi: (p: string, params: { environment?: EnvironmentKind } = {}) =>
      get<Record<string, unknown>>(`${project(p)}/openapi.json${query({ environment: params.environment })}`),
    /** The newest versions of every endpoint, newest first (`limit`, 50 by default). */
    changelog: (p: string, limit?: number) =>
      get<ChangelogResponse>(`${project(p)}/changelog${query({ limit: limit?.toString() })}`),
    /** The changelog as Markdown (`md`) or an Atom feed (`atom`), as text. */
    changelogText: (p: string, format: 'md' | 'atom') => getText(`${project(p)}/changelog.${format}`),
    /** Where the changelog as Markdown or Atom lives, for feed readers and `curl` with a bearer token. */
    changelogPath: (p: string, format: 'md' | 'atom') =>
      `${baseUrl}${ROUTES.apiPrefix}${project(p)}/changelog.${format}`,
    /** Where the OpenAPI export lives, for `curl` with a bearer token. */
    openapiPath: (p: string, params: { environment?: EnvironmentKind } = {}) =>
      `${baseUrl}${ROUTES.apiPrefix}${project(p)}/openapi.json${query({ environment: params.environment })}`,
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;
