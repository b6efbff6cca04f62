// A small Dockerfile reader: no Docker engine runs where our tests run, so the tests read the
// Dockerfiles the way the builder would (continuations, comments, stages, exec and shell forms)
// and check what they promise. It covers the instructions our Dockerfiles use and refuses the
// rest by name, so a new construct fails loudly instead of being misread.

/** One instruction as the builder sees it, after joining continuation lines. */
export interface Instruction {
  /** Upper-case keyword, e.g. `RUN`. */
  keyword: string;
  /** Everything after the keyword, continuations joined with a space. */
  text: string;
  /** `--name=value` flags in front of the arguments (COPY --from, HEALTHCHECK --interval). */
  flags: Record<string, string>;
  /** Exec form (`["a", "b"]`) parsed as JSON, otherwise null. */
  exec: string[] | null;
  /** The arguments after the flags (shell form text; for the exec form the JSON text; for HEALTHCHECK the command after CMD). */
  args: string;
  /** 1-based line number of the instruction's first line. */
  line: number;
}

/** One build stage: from its FROM to the next. */
export interface Stage {
  /** The `AS name`, or the stage's index as a string when unnamed. */
  name: string;
  /** The base image (or an earlier stage's name). */
  base: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  /** ARG instructions before the first FROM. */
  globalArgs: Instruction[];
  stages: Stage[];
}

const KNOWN = new Set([
  'FROM',
  'RUN',
  'CMD',
  'LABEL',
  'EXPOSE',
  'ENV',
  'ADD',
  'COPY',
  'ENTRYPOINT',
  'VOLUME',
  'USER',
  'WORKDIR',
  'ARG',
  'STOPSIGNAL',
  'HEALTHCHECK',
  'SHELL',
]);

/**
 * Parses Dockerfile text into stages of instructions.
 * @throws Error naming the line for an unknown instruction, a heredoc, a bad exec form, or
 *   an instruction before the first FROM other than ARG.
 */
export function parseDockerfile(text: string): Dockerfile {
  const instructions = joinLines(text).map(parseInstruction);
  const result: Dockerfile = { globalArgs: [], stages: [] };
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const match = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args);
      if (!match)
        throw new Error(`line ${instruction.line}: FROM wants "<image> [AS <name>]", got "${instruction.args}"`);
      result.stages.push({ base: match[1]!, name: match[2] ?? String(result.stages.length), instructions: [] });
      continue;
    }
    const stage = result.stages.at(-1);
    if (stage) stage.instructions.push(instruction);
    else if (instruction.keyword === 'ARG') result.globalArgs.push(instruction);
    else throw new Error(`line ${instruction.line}: ${instruction.keyword} before the first FROM`);
  }
  if (result.stages.length === 0) throw new Error('no FROM instruction');
  return result;
}

/** Joins continuation lines and drops comments and blank lines, keeping each start line. */
function joinLines(text: string): { line: number; text: string }[] {
  const logical: { line: number; text: string }[] = [];
  let current: { line: number; text: string } | null = null;
  text.split(/\r?\n/).forEach((raw, index) => {
    const trimmed = raw.trim();
    // Comments are whole lines only (a `#` inside a RUN is shell text); inside a continuation
    // Docker drops them too.
    // Blank lines inside a continuation are skipped too, as the builder does.
    if (trimmed.startsWith('#') || trimmed === '') return;
    const continues = trimmed.endsWith('\\');
    const body = continues ? trimmed.slice(0, -1).trim() : trimmed;
    if (current) current.text = `${current.text} ${body}`.trim();
    else current = { line: index + 1, text: body };
    if (!continues) {
      logical.push(current);
      current = null;
    }
  });
  if (current !== null)
    throw new Error(`line ${(current as { line: number }).line}: the file ends inside a continuation`);
  return logical;
}

function parseInstruction({ line, text }: { line: number; text: string }): Instruction {
  const match = /^(\S+)\s*(.*)$/.exec(text)!;
  const keyword = match[1]!.toUpperCase();
  if (!KNOWN.has(keyword)) throw new Error(`line ${line}: unknown instruction "${match[1]}"`);
  if (/<<-?\s*["']?\w+/.test(match[2]!) && (keyword === 'RUN' || keyword === 'COPY')) {
    throw new Error(`line ${line}: heredocs are not supported by this reader`);
  }
  let rest = match[2]!;
  const flags: Record<string, string> = {};
  for (let flag = /^--([\w-]+)(?:=(\S*))?\s*/.exec(rest); flag; flag = /^--([\w-]+)(?:=(\S*))?\s*/.exec(rest)) {
    flags[flag[1]!] = flag[2] ?? 'true';
    rest = rest.slice(flag[0].length);
  }
  // HEALTHCHECK [flags] CMD <command>: the command is read like a CMD.
  if (keyword === 'HEALTHCHECK' && /^CMD\s/i.test(rest)) rest = rest.slice(3).trim();
  let exec: string[] | null = null;
  if (rest.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(rest);
      if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string'))
        throw new Error('not an array of strings');
      exec = parsed as string[];
    } catch (err) {
      throw new Error(`line ${line}: ${keyword} exec form is not a JSON array of strings (${(err as Error).message})`);
    }
  }
  return { keyword, text, flags, exec, args: rest, line };
}

/** The instructions of a stage with the given keyword. */
export function instructionsOf(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((instruction) => instruction.keyword === keyword);
}

/** The user a stage's later instructions and its container run as (`root` when never set). */
export function effectiveUser(stage: Stage): string {
  return instructionsOf(stage, 'USER').at(-1)?.args.split(':')[0] ?? 'root';
}

/** Ports a stage declares with EXPOSE (protocol suffixes dropped). */
export function exposedPorts(stage: Stage): number[] {
  return instructionsOf(stage, 'EXPOSE').flatMap((instruction) =>
    instruction.args.split(/\s+/).map((port) => Number(port.split('/')[0])),
  );
}

/** Sources and destination of a COPY: the last argument is the destination. */
export function copyPaths(instruction: Instruction): { sources: string[]; destination: string } {
  const parts = instruction.exec ?? instruction.args.split(/\s+/);
  if (parts.length < 2) throw new Error(`line ${instruction.line}: COPY wants at least a source and a destination`);
  return { sources: parts.slice(0, -1), destination: parts.at(-1)! };
}

/**
 * Whether a build-context path is left out by `.dockerignore` patterns (`*` within a segment,
 * `**` across segments, `!` re-includes; the last matching pattern wins, as in Docker).
 */
export function isDockerIgnored(patterns: readonly string[], contextPath: string): boolean {
  let ignored = false;
  for (const raw of patterns) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = (negated ? line.slice(1) : line).replace(/^\/+|\/+$/g, '');
    const regex = new RegExp(
      `^${pattern
        .split('/')
        .map((segment) =>
          segment === '**'
            ? '(?:.*)'
            : segment
                .replace(/[.+^${}()|[\]\\]/g, '\\$&')
                .replace(/\*/g, '[^/]*')
                .replace(/\?/g, '[^/]'),
        )
        .join('/')
        .replace(/\(\?:\.\*\)\//g, '(?:.*/)?')}(?:/.*)?$`,
    );
    if (regex.test(contextPath)) ignored = !negated;
  }
  return ignored;
}

/** Variables a stage sets with `ENV key=value ...` (the legacy `ENV key value` form too). */
export function stageEnv(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const instruction of instructionsOf(stage, 'ENV')) {
    if (!instruction.args.includes('=')) {
      const [key, ...value] = instruction.args.split(/\s+/);
      env[key!] = value.join(' ');
      continue;
    }
    for (const pair of instruction.args.match(/[\w.-]+=(?:"[^"]*"|'[^']*'|\S*)/g) ?? []) {
      const at = pair.indexOf('=');
      env[pair.slice(0, at)] = pair.slice(at + 1).replace(/^(["'])(.*)\1$/, '$2');
    }
  }
  return env;
}

/** An npm command found in a RUN instruction, split on `&&`. */
export interface NpmCommand {
  /** `ci`, `run`, ... */
  command: string;
  /** For `npm run`: the script name. */
  script: string | null;
  /** Workspaces given with `-w` / `--workspace`. */
  workspaces: string[];
  /** Other flags, e.g. `--omit=dev`. */
  flags: string[];
  /** The command as written. */
  text: string;
}

/** The shell commands a stage runs, in order: each RUN split on `&&`. */
export function runCommands(stage: Stage): string[] {
  return instructionsOf(stage, 'RUN')
    .flatMap((instruction) => instruction.args.split(/\s*&&\s*/))
    .map((text) => text.trim());
}

/** The npm commands a stage runs, in order. */
export function npmCommands(stage: Stage): NpmCommand[] {
  return runCommands(stage)
    .filter((text) => text.startsWith('npm '))
    .map((text) => {
      const words = text.split(/\s+/).slice(1);
      const result: NpmCommand = { command: words[0] ?? '', script: null, workspaces: [], flags: [], text };
      for (let index = 1; index < words.length; index++) {
        const word = words[index]!;
        if (word === '-w' || word === '--workspace') result.workspaces.push(words[++index] ?? '');
        else if (word.startsWith('--workspace=')) result.workspaces.push(word.slice('--workspace='.length));
        else if (word.startsWith('-')) result.flags.push(word);
        else if (result.command === 'run' && result.script === null) result.script = word;
      }
      return result;
    });
}
