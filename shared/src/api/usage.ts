import type { MatrixKind } from './lifecycle';

/** What can be marked deprecated: an endpoint, or one of its query parameters, request headers, request or response fields. */
export const DEPRECATION_LOCATIONS = ['endpoint', 'query', 'header', 'request', 'response'] as const;
export type DeprecationLocation = (typeof DEPRECATION_LOCATIONS)[number];

/** A mark that part of an endpoint is deprecated: by a person in the dashboard, or by an OpenAPI import. */
export interface DeprecationResponse {
  method: string;
  path: string;
  location: DeprecationLocation;
  /** `''` for the endpoint; the parameter or header name; the field's JSON path (`$.name`, `$[].id`). */
  name: string;
  source: 'openapi' | 'dashboard';
  createdBy: string | null;
  createdAt: string;
}

/** `POST /projects/{p}/deprecations`: marks part of an endpoint deprecated. */
export interface DeprecationRequest {
  method: string;
  path: string;
  location: DeprecationLocation;
  name?: string;
}

/** A name (status, field, parameter, header) and when the environment's traffic last had it. */
export interface NameLastSeen {
  name: string;
  lastSeen: string;
  /** Marked deprecated. */
  deprecated: boolean;
}

/** When each part of an endpoint was last seen in one environment kind. */
export interface EndpointUsage {
  method: string;
  path: string;
  /** Documented: its id and current version; null for traffic of an undocumented endpoint. */
  endpointId: string | null;
  version: string | null;
  /** The endpoint is marked deprecated. */
  deprecated: boolean;
  /**
   * When the API last answered it with a `Deprecation` (RFC 9745) or `Sunset` (RFC 8594) header
   * (presence only, never a value), and with a Sunset date that had already passed when the agent
   * saw the answer (`sunsetPast`: the agent tells that one bit, never the date).
   */
  deprecationHeaders: { deprecation: string | null; sunset: string | null; sunsetPast: string | null };
  /** null: never seen there. */
  lastSeen: string | null;
  statuses: Array<{ status: number; lastSeen: string }>;
  query: NameLastSeen[];
  requestHeaders: NameLastSeen[];
  responseHeaders: NameLastSeen[];
  requestFields: NameLastSeen[];
  responseFields: NameLastSeen[];
}

/** `GET /projects/{p}/usage?environment=`: every documented or seen endpoint, by path then method. */
export interface UsageResponse {
  environment: MatrixKind;
  /** The build (row name) whose evidence this is; null for every build of the environment. */
  build: string | null;
  endpoints: EndpointUsage[];
}

/** A documented endpoint the environment's traffic did not reach within the window. */
export interface OrphanEndpoint {
  endpointId: string;
  method: string;
  path: string;
  version: string;
  /** null: never seen there. */
  lastSeen: string | null;
  deprecated: boolean;
}

/** Something deprecated that the environment's traffic still reached within the window. */
export interface ZombieUse {
  method: string;
  path: string;
  location: DeprecationLocation;
  name: string;
  lastSeen: string;
  why: 'marked deprecated' | 'answered with a Deprecation or Sunset header' | 'answered past its Sunset date';
}

/** `GET /projects/{p}/usage/orphans?environment=&days=`. */
export interface OrphansResponse {
  environment: MatrixKind;
  /** The build (row name) whose traffic was looked at; null for every build of the environment. */
  build: string | null;
  days: number;
  since: string;
  orphans: OrphanEndpoint[];
  zombies: ZombieUse[];
}

/** An endpoint safe to remove, with the evidence that says so. */
export interface SafeToRemoveEndpoint extends OrphanEndpoint {
  /** The evidence, in words: when production and staging last saw it, whether it is deprecated. */
  evidence: string[];
}

/** `GET /projects/{p}/usage/safe-to-remove?days=`: and a removal proposal drafted from it. */
export interface SafeToRemoveResponse {
  days: number;
  since: string;
  /** When production traffic was last seen at all: with none in the window, nothing is called safe. */
  productionLastSeen: string | null;
  endpoints: SafeToRemoveEndpoint[];
  draft: { title: string; description: string } | null;
}
