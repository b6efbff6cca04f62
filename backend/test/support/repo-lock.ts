import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * Runs `work` holding the lock directory `relativePath` of the checkout (mkdir is atomic): jest
 * runs test files in two workers, and files that build or pack into one folder take turns.
 * @throws when the lock stays held for 2 minutes (a killed run leaves it: remove it by hand)
 */
export async function withRepoLock<T>(relativePath: string, work: () => Promise<T> | T): Promise<T> {
  const lock = path.join(REPO_ROOT, relativePath);
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (Date.now() > deadline) throw new Error(`${lock} held for 2 minutes; remove it if no test is running`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await work();
  } finally {
    fs.rmdirSync(lock);
  }
}

/**
 * `npm pack` of the agent's workspace into `destination`, as users get it. Its prepack bundles into
 * agent/dist and its postpack removes the bundle, so two packs take turns. @returns the tarball's path
 */
export function packAgent(destination: string): Promise<string> {
  return withRepoLock('agent/.pack-lock', () => {
    const printed = execFileSync(
      'npm',
      ['pack', '-w', '@spectator/agent', '--pack-destination', destination, '--silent'],
      {
        cwd: REPO_ROOT,
        encoding: 'utf8',
      },
    );
    return path.join(destination, printed.trim().split('\n').pop()!);
  });
}
