/**
 * Ignore rules: the `ignoreRequests` list of `service.yml` (seed-spec §4, Ignore rules; DESIGN.md,
 * Ignore rules; syntax in docs/ignore-rules.md). Traffic matching an entry is not observed.
 */
import { parse as parseYaml } from 'yaml';
import { pathOnly } from '../paths/segments';
import { templatePath } from '../paths/template';
import type { RE2JS } from 're2js';
import { compilePattern, decodePercent, PatternError } from './pattern';

export { MAX_PROGRAM_SIZE } from './pattern';

export interface IgnoreRule {
  /** The entry as written in service.yml. */
  source: string;
  /** Upper-case methods; `null` means every method. */
  methods: string[] | null;
  /** Does the rule's path pattern match `path` (its query, if any, is not looked at)? */
  test(path: string): boolean;
}

export interface RuleError {
  /** The entry as written; for an entry that is not a string, its YAML value as JSON. */
  entry: string;
  /** Position in the `ignoreRequests` list, from 0. */
  index: number;
  /** The whole story for a log line or the dashboard: `ignoreRequests[3] "FETCH /x": unknown method "FETCH" (…)`. */
  message: string;
  /** Just what is wrong with the entry: `unknown method "FETCH" (…)`. */
  problem: string;
}

export interface ParsedRules {
  rules: IgnoreRule[];
  errors: RuleError[];
}

/** A whole service.yml: the ignore rules, and the path templates users stated (`paths:`). */
export interface ParsedServiceConfig extends ParsedRules {
  /** Canonical templates of the `paths` list, matched like documented ones (docs/paths.md, Path hints). */
  paths: string[];
  /** Bad `paths` entries, each named; the other entries still apply. */
  pathErrors: RuleError[];
}

/** `paths` entries read at most. */
export const MAX_PATH_HINTS = 1_000;

/** The methods of RFC 9110 §9 and RFC 5789 (PATCH). */
export const HTTP_METHODS: readonly string[] = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'CONNECT',
  'OPTIONS',
  'TRACE',
  'PATCH',
];

/** Longest entry accepted, in characters: a longer one is surely a mistake, and costs matching time. */
export const MAX_ENTRY_LENGTH = 500;

/**
 * Largest compiled size of all the rules of one list together, in RE2 instructions: a request is
 * tested against every rule, so this bounds the work per path character of the whole list
 * (about 140 ordinary rules fit: `GET /favicon.ico` is 14 instructions, `OPTIONS (.*)` 4).
 */
export const MAX_RULES_PROGRAM_SIZE = 2_500;

/**
 * Longest path rules are tested on, in characters, after its query is dropped and it is
 * percent-decoded: a longer path is never ignored (it is observed as if no rule matched). Matching
 * costs the list's program size per path character, and the agent reads request heads up to
 * 256 KiB, so this bounds the work of one request to MAX_RULES_PROGRAM_SIZE × 2,048 steps. The
 * backend stores path templates of at most 2,048 characters too, so a rule means the same on both sides.
 */
export const MAX_MATCHED_PATH_LENGTH = 2_048;

/** Largest service.yml accepted, in characters. */
export const MAX_CONFIG_LENGTH = 1_000_000;

const EXAMPLE = 'ignoreRequests:\n  - OPTIONS (.*)\n  - GET /favicon.ico';

/**
 * Parse `ignoreRequests` entries: `<METHOD> [<METHOD> ...] <path pattern>`, or a path pattern
 * alone for every method. Bad entries are reported in `errors` (each naming the entry, its index
 * and the problem); the good ones are in `rules` and still apply.
 */
export function parseIgnoreRules(entries: readonly unknown[]): ParsedRules {
  if (!Array.isArray(entries)) throw new TypeError(`ignore rules must be a list of strings, got ${describe(entries)}`);
  const parsed: ParsedRules = { rules: [], errors: [] };
  let programSize = 0;
  entries.forEach((entry: unknown, index) => {
    try {
      const { rule, size } = parseEntry(entry);
      if (programSize + size > MAX_RULES_PROGRAM_SIZE) {
        throw new PatternError(
          `the rules before it and this one compile to more than ${MAX_RULES_PROGRAM_SIZE} instructions together (this one ${size}), so that matching stays fast; simplify the large ones`,
        );
      }
      programSize += size;
      parsed.rules.push(rule);
    } catch (error) {
      if (!(error instanceof PatternError)) throw error;
      const text = typeof entry === 'string' ? entry : asJson(entry);
      parsed.errors.push({
        entry: text,
        index,
        problem: error.message,
        message: `ignoreRequests[${index}] ${JSON.stringify(text)}: ${error.message}`,
      });
    }
  });
  return parsed;
}

/**
 * Parse the text of service.yml. Throws an Error with a clear message when it is not YAML, is
 * not a mapping or has no `ignoreRequests` list; other keys are left alone. An empty list is
 * fine (nothing ignored).
 */
export function parseServiceConfig(text: string): ParsedServiceConfig {
  if (typeof text !== 'string') throw new TypeError(`service.yml text must be a string, got ${describe(text)}`);
  if (text.length > MAX_CONFIG_LENGTH)
    throw new Error(`service.yml is ${text.length} characters long; at most ${MAX_CONFIG_LENGTH} are read`);
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw new Error(`service.yml is not valid YAML: ${(error as Error).message.split('\n', 1)[0]}`);
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new Error(
      `service.yml must be a YAML mapping with an "ignoreRequests" list, like\n${EXAMPLE}\nbut it is ${describe(document)}`,
    );
  }
  if (!('ignoreRequests' in document)) {
    throw new Error(
      `service.yml has no "ignoreRequests" list; expected for example\n${EXAMPLE}\n(write "ignoreRequests: []" to ignore nothing)`,
    );
  }
  const entries = (document as { ignoreRequests: unknown }).ignoreRequests;
  if (!Array.isArray(entries)) {
    throw new Error(
      `"ignoreRequests" in service.yml must be a list of strings, but it is ${describe(entries)} (write "ignoreRequests: []" to ignore nothing)`,
    );
  }
  return { ...parseIgnoreRules(entries), ...parsePathHints((document as { paths?: unknown }).paths) };
}

/** The `paths:` list of service.yml: templates such as `/repos/{owner}/{repo}/issues/{number}`. */
function parsePathHints(value: unknown): Pick<ParsedServiceConfig, 'paths' | 'pathErrors'> {
  const parsed: Pick<ParsedServiceConfig, 'paths' | 'pathErrors'> = { paths: [], pathErrors: [] };
  if (value === undefined || value === null) return parsed;
  if (!Array.isArray(value))
    throw new Error(
      `"paths" in service.yml must be a list of path templates like "/users/{user}", but it is ${describe(value)}`,
    );
  value.slice(0, MAX_PATH_HINTS).forEach((entry: unknown, index) => {
    const problem =
      typeof entry !== 'string'
        ? `an entry must be a path template like "/users/{user}", got ${describe(entry)}`
        : !entry.startsWith('/')
          ? 'a path template starts with "/"'
          : entry.length > MAX_ENTRY_LENGTH
            ? `the entry is ${entry.length} characters long; at most ${MAX_ENTRY_LENGTH}`
            : null;
    if (problem === null) parsed.paths.push(templatePath(entry as string, [entry as string]));
    else {
      const text = typeof entry === 'string' ? entry : asJson(entry);
      parsed.pathErrors.push({
        entry: text,
        index,
        problem,
        message: `paths[${index}] ${JSON.stringify(text)}: ${problem}`,
      });
    }
  });
  parsed.paths = [...new Set(parsed.paths)];
  return parsed;
}

/** True when a request (method, path; a query is not looked at) is ignored by the rules. */
export function isIgnored(rules: readonly IgnoreRule[], method: string, path: string): boolean {
  const upperMethod = method.toUpperCase();
  const applying = rules.filter((rule) => rule.methods === null || rule.methods.includes(upperMethod));
  if (applying.length === 0) return false;
  // Normalized once for the whole list; past the length bound no rule is run (see MAX_MATCHED_PATH_LENGTH).
  const normalized = normalizePath(path);
  if (normalized === null) return false;
  return applying.some((rule) => matchers.get(rule)!.regex.matches(normalized));
}

/**
 * The most engine work `isIgnored(rules, method, path)` can take, in RE2 steps: the program sizes
 * of the rules applying to the method, summed, times the length of the path as rules see it (0
 * when no rule is run). At most MAX_RULES_PROGRAM_SIZE × MAX_MATCHED_PATH_LENGTH; computed
 * without running any rule, so that a caller can keep to a budget.
 */
export function ignoreWork(rules: readonly IgnoreRule[], method: string, path: string): number {
  const upperMethod = method.toUpperCase();
  let programSize = 0;
  for (const rule of rules)
    if (rule.methods === null || rule.methods.includes(upperMethod)) programSize += matchers.get(rule)!.programSize;
  if (programSize === 0) return 0;
  return programSize * (normalizePath(path)?.length ?? 0);
}

/** The compiled pattern of each rule parsed here, run on paths already normalized, and its size. */
const matchers = new WeakMap<IgnoreRule, { regex: RE2JS; programSize: number }>();

function parseEntry(entry: unknown): { rule: IgnoreRule; size: number } {
  if (typeof entry !== 'string')
    throw new PatternError(`an entry must be a string like "GET /health", got ${describe(entry)}`);
  if (entry.length > MAX_ENTRY_LENGTH)
    throw new PatternError(`the entry is ${entry.length} characters long; at most ${MAX_ENTRY_LENGTH}`);
  const tokens = entry.trim().split(/\s+/).filter(Boolean);
  if (tokens.length === 0) throw new PatternError('the entry is empty; write methods and a path, like "GET /health"');

  const pathIndex = tokens.findIndex((token) => !/^[A-Za-z]+$/.test(token));
  const methods = (pathIndex < 0 ? tokens : tokens.slice(0, pathIndex)).map((m) => m.toUpperCase());
  const unknown = methods.find((m) => !HTTP_METHODS.includes(m));
  if (unknown !== undefined) {
    const hint = pathIndex < 0 ? '; a path starts with "/"' : '';
    throw new PatternError(`unknown method "${unknown}" (expected one of ${HTTP_METHODS.join(', ')})${hint}`);
  }
  if (pathIndex < 0)
    throw new PatternError(`no path after the method; write for example "${methods[0]} (.*)" for every path`);
  const rest = tokens.slice(pathIndex);
  if (rest.length > 1)
    throw new PatternError(
      `one path per entry, found "${rest[0]}" then "${rest[1]}" (a space in a path is written %20)`,
    );

  const { regex, programSize } = compilePattern(rest[0]!);
  const rule: IgnoreRule = {
    source: entry,
    methods: methods.length > 0 ? [...new Set(methods)] : null,
    test: (path: string): boolean => {
      const normalized = normalizePath(path);
      return normalized !== null && regex.matches(normalized);
    },
  };
  matchers.set(rule, { regex, programSize });
  return { rule, size: programSize };
}

/**
 * The path as rules see it: no query or fragment, percent-decoded (see decodePercent), one
 * trailing slash dropped; null when it is longer than MAX_MATCHED_PATH_LENGTH (never ignored).
 */
function normalizePath(path: string): string | null {
  const bare = pathOnly(path);
  // Decoding shortens at most 9 to 1 (`%E2%82%AC` is `€`): a path longer than that is not decoded.
  if (bare.length > 9 * MAX_MATCHED_PATH_LENGTH + 1) return null;
  const decoded = decodePercent(bare);
  const normalized = decoded.length > 1 && decoded.endsWith('/') ? decoded.slice(0, -1) : decoded;
  return normalized.length > MAX_MATCHED_PATH_LENGTH ? null : normalized;
}

/** A non-string entry as JSON, shortened: `42`, `{"GET":"/x"}`. */
function asJson(value: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(value) ?? String(value);
  } catch {
    json = String(value);
  }
  return json.length > 80 ? `${json.slice(0, 80)}…` : json;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string')
    return `the text ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)}`;
  return `${typeof value} ${String(value)}`;
}
