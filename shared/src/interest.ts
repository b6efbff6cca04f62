/** Media types whose bodies are shaped: `application/json` and any `*+json`. */
export function isJsonMediaType(_contentType: string | null | undefined): boolean {
  throw new Error('isJsonMediaType: not implemented yet');
}

/** Count of interest: 1 per request with a JSON body + 1 per response with a JSON body, times `count`. */
export function countOfInterest(_o: { request: { contentType: string } | null; response: { contentType: string } | null; count: number }): number {
  throw new Error('countOfInterest: not implemented yet');
}
