/**
 * Consumers on the wire (issue 19): who called, as pseudonyms. The agent reads a request's consumer
 * from a configured source (a bearer JWT claim, an API-key or client-id header, the client
 * certificate's subject) and sends only HMAC-SHA256 of it under a key the backend never sees,
 * truncated to `CONSUMER_ID_LENGTH` hex digits (docs/privacy.md, Consumers).
 */

/** Hex digits of a pseudonym (64 bits of HMAC-SHA256). */
export const CONSUMER_ID_LENGTH = 16;

/** What a pseudonym looks like: nothing else is accepted where one is expected. */
export const CONSUMER_ID_PATTERN = /^[0-9a-f]{16}$/;

/**
 * Distinct consumers one observation row names at most; calls of further consumers are counted in
 * the row's `consumersOverflow`, never dropped unseen.
 */
export const MAX_CONSUMERS_PER_ROW = 64;

/** The calls of one consumer in an observation row. */
export interface WireConsumer {
  /** The pseudonym (`CONSUMER_ID_PATTERN`), never the value it was made from. */
  id: string;
  count: number;
  lastSeen: string; // ISO 8601
}
