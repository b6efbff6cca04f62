import { consumerId, MIN_CONSUMER_KEY_LENGTH } from './observe/consumers';

export const CONSUMER_ID_HELP = `Usage: spectator-agent consumer-id [--project <slug>] <value | ->

Prints the pseudonym the agent sends for a consumer whose source value is <value>: a JWT claim
(the sub, client_id or azp), an API key or client id, or a client certificate's subject written
as one line (C=DE,O=Acme,CN=mobile). With - the value is read from standard input (one line),
which keeps it out of the shell's history. Computed here with the agent's secret; nothing is
sent. Give the pseudonym a name in the dashboard (Consumers), e.g. "mobile app 5.x".

  --project <slug>   The project the agent reports to (SPECTATOR_PROJECT)
  SPECTATOR_CONSUMER_KEY (environment only): the agent's secret, as in its Secret
`;

/** The first line of a readable stream, without its line ending. */
async function firstLine(input: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0] ?? '';
}

/** `spectator-agent consumer-id`: resolves with the exit code (0 printed, 2 bad options). */
export async function runConsumerId(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  out: { write(text: string): unknown } = process.stdout,
  err: { write(text: string): unknown } = process.stderr,
  input: NodeJS.ReadableStream = process.stdin,
): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    out.write(CONSUMER_ID_HELP);
    return 0;
  }
  const problems: string[] = [];
  let project = env.SPECTATOR_PROJECT;
  const values: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--project' || arg.startsWith('--project=')) {
      project = arg === '--project' ? argv[++i] : arg.slice('--project='.length);
      if (!project) problems.push('--project needs a value');
    } else if (arg.startsWith('--')) problems.push(`unknown option ${arg.split('=')[0]}`);
    else values.push(arg);
  }
  const key = env.SPECTATOR_CONSUMER_KEY;
  if (key === undefined || key.length < MIN_CONSUMER_KEY_LENGTH)
    problems.push(
      `SPECTATOR_CONSUMER_KEY must be set to the agent's secret (at least ${MIN_CONSUMER_KEY_LENGTH} characters)`,
    );
  if (!project) problems.push('--project (or SPECTATOR_PROJECT) is required: pseudonyms differ between projects');
  if (values.length !== 1) problems.push('give exactly one value (or - to read it from standard input)');
  if (problems.length > 0) {
    err.write(`spectator-agent consumer-id: ${problems.join('; ')}\n`);
    return 2;
  }
  const value = values[0] === '-' ? await firstLine(input) : (values[0] as string);
  if (value.trim() === '') {
    err.write('spectator-agent consumer-id: the value is empty\n');
    return 2;
  }
  out.write(`${consumerId(key as string, project as string, value.trim())}\n`);
  return 0;
}
