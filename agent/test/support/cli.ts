import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { clockEnv } from './clock';
import { waitFor } from './wait';

const CLI = path.join(__dirname, '../../src/cli.ts');
const REGISTER = path.join(__dirname, 'register.js');

/** Run the real CLI (TypeScript sources through swc) and collect its output and exit code. */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  whileRunning?: (child: ChildProcess, stdout: () => string) => Promise<void>,
) {
  const child = spawn(process.execPath, ['-r', REGISTER, CLI, ...args], {
    env: { PATH: process.env.PATH, ...clockEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  // 'close', not 'exit': the last output can still be in the pipes when the process exits.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return (async () => {
    if (whileRunning) await whileRunning(child, () => stdout);
    const code = await exited;
    return { code, stdout, stderr };
  })();
}

/** The proxy URL from the CLI's `agent started` log line, once it is written. */
export async function proxyUrlOf(stdout: () => string): Promise<string> {
  const started = await waitFor(
    'agent started',
    () =>
      stdout()
        .split('\n')
        .find((line) => line.includes('"msg":"agent started"')),
    15_000,
  );
  return (JSON.parse(started) as { proxy: string }).proxy;
}
