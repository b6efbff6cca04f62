export interface IgnoreRule {
  /** The entry as written in service.yml. */
  source: string;
  /** Upper-case methods; `null` means every method. */
  methods: string[] | null;
  test(path: string): boolean;
}

export interface RuleError {
  /** The entry as written (or its index when not a string). */
  entry: string;
  index: number;
  message: string;
}

export interface ParsedRules {
  rules: IgnoreRule[];
  errors: RuleError[];
}

/** Parse `ignoreRequests` entries; bad entries are reported, good ones still apply. */
export function parseIgnoreRules(_entries: readonly unknown[]): ParsedRules {
  throw new Error('parseIgnoreRules: not implemented yet');
}

/** Parse the text of service.yml. Throws an Error with a clear message when it is not YAML or has no `ignoreRequests` list. */
export function parseServiceConfig(_text: string): ParsedRules {
  throw new Error('parseServiceConfig: not implemented yet');
}

/** True when a request (method, path without query) is ignored by the rules. */
export function isIgnored(_rules: readonly IgnoreRule[], _method: string, _path: string): boolean {
  throw new Error('isIgnored: not implemented yet');
}
