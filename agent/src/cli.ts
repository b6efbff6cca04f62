#!/usr/bin/env node
import { startAgent } from './agent';
import { runCheck } from './check';
import { ConfigError, helpText, parseAgentConfig } from './config';
import { runConsumerId } from './consumer-id';
import { execWithAgentMalloc } from './malloc';
import { agentVersion } from './version';

/** A subcommand: gets the arguments after its name, resolves with the exit code. */
type Subcommand = (argv: string[], env: NodeJS.ProcessEnv) => Promise<number>;

/**
 * Subcommands by name; without a known name the arguments go to `run`. Room for more (e.g. a CI
 * `check`): add an entry here.
 */
const SUBCOMMANDS: Record<string, Subcommand> = {
  run: runAgent,
  check: (argv, env) => runCheck(argv, env),
  'consumer-id': (argv, env) => runConsumerId(argv, env),
};

/** Entry point of `spectator-agent`. Resolves with the exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const command = commandOf(argv);
  switch (command.kind) {
    case 'subcommand':
      return command.run(command.args, env);
    case 'help':
      process.stdout.write(helpText(agentVersion()));
      return 0;
    case 'version':
      process.stdout.write(`${agentVersion()}\n`);
      return 0;
    case 'agent':
      return runAgent(command.args, env);
  }
}

/** What the arguments ask for: a subcommand, help, the version, or the agent itself. */
function commandOf(
  argv: string[],
): { kind: 'subcommand'; run: Subcommand; args: string[] } | { kind: 'help' | 'version' | 'agent'; args: string[] } {
  const [first, ...rest] = argv;
  // A subcommand other than `run` reads its own options, --help included.
  if (first !== undefined && first !== 'run' && SUBCOMMANDS[first])
    return { kind: 'subcommand', run: SUBCOMMANDS[first] as Subcommand, args: rest };
  const args = first === 'run' ? rest : argv;
  const options = args.indexOf('--') < 0 ? args : args.slice(0, args.indexOf('--'));
  if (options.includes('--help') || options.includes('-h')) return { kind: 'help', args };
  if (options.includes('--version') || options.includes('-v')) return { kind: 'version', args };
  return { kind: 'agent', args };
}

/** Run the agent until SIGTERM or SIGINT; then shut down gracefully and exit 0. */
async function runAgent(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let agent;
  try {
    // Bad options, and files they name that cannot be used (TLS), stop the agent with every problem named.
    agent = await startAgent(parseAgentConfig(argv, env));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`spectator-agent: ${err.message}\n`);
    return 2;
  }
  return new Promise<number>((resolve) => {
    const stop = (): void => {
      // A second signal while stopping means "now".
      process.once('SIGTERM', () => resolve(1));
      process.once('SIGINT', () => resolve(1));
      agent.close().then(
        () => resolve(0),
        (err: unknown) => {
          process.stderr.write(`spectator-agent: shutdown failed: ${(err as Error).message}\n`);
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    process.on('SIGHUP', () => void agent.restartCommand());
    for (const signal of ['SIGUSR1', 'SIGUSR2'] as const) process.on(signal, () => agent.signalCommand(signal));
  });
}

/** Runs `spectator-agent` with this process's arguments and exits with its code (the bin calls this). */
export function run(): void {
  // The proxy runs with glibc's top pad (malloc.ts): this restarts the process in place when it must.
  if (commandOf(process.argv.slice(2)).kind === 'agent') execWithAgentMalloc(process);
  main(process.argv.slice(2), process.env).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`spectator-agent: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}

// `node cli.js` (the one-file build in the image, the tests) runs it too.
if (require.main === module) run();
