import { joinSegments, ParameterNames, splitPath, type Segment } from './segments';

export interface CardinalityLimiterOptions {
  /**
   * Distinct literals allowed at one position under one prefix before the position becomes a
   * parameter. Default 50.
   */
  maxLiterals?: number;
  /**
   * Prefixes tracked at most, so memory stays bounded whatever the traffic. Once reached, a literal
   * under a prefix never seen before becomes a parameter. Default 10,000.
   */
  maxPrefixes?: number;
}

interface PrefixNode {
  /** Literals seen at the next position, each with its own subtree. */
  literals: Map<string, PrefixNode>;
  /** The subtree when the next position is a parameter. */
  param?: PrefixNode;
  /** The next position had too many literals: from now on it is a parameter. */
  collapsed?: true;
}

/**
 * Keeps the number of templates bounded when identifiers slip past the detectors of
 * `templatePath` (slugs, user names: `/users/alice`, `/users/bob`, …). It watches templates and,
 * once one position under one prefix has seen more than `maxLiterals` distinct literals, makes
 * that position a parameter for every later template (`/users/{userId}`). Templates documented in
 * the backend should not be passed through it: they are kept as they are.
 */
export class CardinalityLimiter {
  private readonly maxLiterals: number;
  private readonly maxPrefixes: number;
  private readonly root: PrefixNode = { literals: new Map() };
  private prefixes = 1;

  constructor(options: CardinalityLimiterOptions = {}) {
    this.maxLiterals = positiveInteger(options.maxLiterals ?? 50, 'maxLiterals');
    this.maxPrefixes = positiveInteger(options.maxPrefixes ?? 10_000, 'maxPrefixes');
  }

  /** Prefixes tracked now (at most `maxPrefixes`). */
  get trackedPrefixes(): number {
    return this.prefixes;
  }

  /** The template to report for `template`: itself, or with crowded positions made parameters. */
  limit(template: string): string {
    const segments = splitPath(template);
    const names = new ParameterNames(segments);
    const limited: Segment[] = [];
    let node = this.root;
    for (const segment of segments) {
      const literalNode = segment.kind === 'literal' ? this.literalChild(node, segment.text) : undefined;
      if (literalNode) {
        limited.push(segment);
        node = literalNode;
      } else {
        limited.push(segment.kind === 'param' ? segment : names.after(limited[limited.length - 1]));
        node = this.paramChild(node);
      }
    }
    return joinSegments(limited);
  }

  /** The subtree of a literal at the next position, or undefined when it must be a parameter. */
  private literalChild(node: PrefixNode, text: string): PrefixNode | undefined {
    if (node.collapsed) return undefined;
    const seen = node.literals.get(text);
    if (seen) return seen;
    if (node.literals.size >= this.maxLiterals) {
      node.collapsed = true;
      this.forget(node.literals); // every later literal here is a parameter: the subtrees are of no use
      return undefined;
    }
    const child = this.newNode();
    if (child) node.literals.set(text, child);
    return child;
  }

  private paramChild(node: PrefixNode): PrefixNode {
    // Past the memory cap, an untracked node stands in: every literal under it becomes a parameter.
    node.param ??= this.newNode();
    return node.param ?? { literals: new Map(), collapsed: true };
  }

  private newNode(): PrefixNode | undefined {
    if (this.prefixes >= this.maxPrefixes) return undefined;
    this.prefixes++;
    return { literals: new Map() };
  }

  /** Drop subtrees and give their nodes back to the budget (iteratively: paths can be deep). */
  private forget(literals: Map<string, PrefixNode>): void {
    const pending = [...literals.values()];
    literals.clear();
    for (let node = pending.pop(); node; node = pending.pop()) {
      this.prefixes--;
      pending.push(...node.literals.values());
      if (node.param) pending.push(node.param);
    }
  }
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${String(value)}`);
  return value;
}
