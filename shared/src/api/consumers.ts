/**
 * Consumers and blast radius in the management API (issue 19): who called what, named by pseudonym
 * (protocol/consumers.ts) or by the label a team gave it, never by the value it was made from.
 */
import type { ChangeResponse } from './types';
import type { MatrixKind } from './lifecycle';

/** Windows of consumer questions: the last N days (1–400), 30 by default. */
export const DEFAULT_CONSUMER_DAYS = 30;
export const MAX_CONSUMER_DAYS = 400;

/** One consumer's calls of something (an endpoint and status, a broken part, the project). */
export interface ConsumerUse {
  /** The pseudonym. */
  consumer: string;
  /** The team's name for it (`PUT /consumers/{consumer}/label`), null when unnamed. */
  label: string | null;
  calls: number;
  /** Its part of the calls counted by agents that identify consumers (0–1). */
  share: number;
  lastCall: string;
}

/** `PUT /projects/{p}/consumers/{consumer}/label`: a team's name for a pseudonym. */
export interface ConsumerLabelResponse {
  consumer: string;
  label: string;
  updatedBy: string | null;
  updatedAt: string;
}

/** `GET /projects/{p}/consumers?environment=&days=`: every consumer of an environment in a window. */
export interface ConsumersResponse {
  environment: MatrixKind;
  /** The build (environment row: `PR #n` for a CI run) the figures are of; null for the whole environment. */
  build: string | null;
  days: number;
  /** The first day of the window (UTC, ISO 8601). */
  since: string;
  /** Calls counted by agents that identify consumers, identified or not. */
  calls: number;
  /** Calls of consumers past an agent's bound (counted, not named). */
  otherCalls: number;
  /** The environment's builds with calls in the window (at most 100), newest call first: what `build=` takes. */
  builds: ConsumerBuild[];
  consumers: Array<ConsumerUse & { endpoints: number }>;
  /** Labelled pseudonyms that made no call in the window. */
  unseen: ConsumerLabelResponse[];
}

/** A build (environment row) and the calls its agents counted in a window. */
export interface ConsumerBuild {
  build: string;
  calls: number;
  lastCall: string;
}

/** Calls of one endpoint, status and environment, per consumer. */
export interface EndpointConsumersRow {
  environment: MatrixKind;
  status: number;
  calls: number;
  otherCalls: number;
  consumers: ConsumerUse[];
}

/** `GET /projects/{p}/endpoints/{id}/consumers?environment=&days=`. */
export interface EndpointConsumersResponse {
  endpoint: { id: string; method: string; path: string };
  /** The build the figures are of; null for every build. */
  build: string | null;
  days: number;
  since: string;
  rows: EndpointConsumersRow[];
}

/** A broken part: calls of an endpoint with one status (a response change), or with any (`status` null). */
export interface BlastRadiusPart {
  method: string;
  path: string;
  /** The status whose calls the changes affect; null for every status (request, parameter and new-status changes). */
  status: number | null;
  /** The breaking changes of this part. */
  changes: ChangeResponse[];
  /** Calls of the part counted by agents that identify consumers. */
  calls: number;
  otherCalls: number;
  consumers: ConsumerUse[];
}

/** Who breaking changes break: per broken part, the consumers that called it in the window. */
export interface BlastRadiusResponse {
  environment: MatrixKind;
  /** The build whose consumers these are; null for the whole environment. */
  build: string | null;
  days: number;
  since: string;
  parts: BlastRadiusPart[];
  /** The affected set: every consumer of any part, calls added up, newest last call. */
  consumers: Array<Omit<ConsumerUse, 'share'>>;
  /** Calls of the parts by consumers past an agent's bound (counted, not named). */
  otherCalls: number;
}
