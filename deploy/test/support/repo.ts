import fs from 'node:fs';
import path from 'node:path';

/** The repository root (the Docker build context, the folder `npm start` runs in). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/** Text of a file given relative to the repository root. */
export function readRepoFile(relativePath: string): string {
  return fs.readFileSync(path.join(REPO_ROOT, relativePath), 'utf8');
}

/** Whether a path relative to the repository root exists. */
export function repoPathExists(relativePath: string): boolean {
  return fs.existsSync(path.join(REPO_ROOT, relativePath));
}

/** The `scripts` of a package.json given by its folder relative to the root ('' for the root). */
export function packageScripts(folder: string): Record<string, string> {
  const manifest = JSON.parse(readRepoFile(path.join(folder, 'package.json'))) as { scripts?: Record<string, string> };
  return manifest.scripts ?? {};
}

/** Workspace folders by package name, e.g. `@spectator/agent` → `agent`. */
export function workspaceFolders(): Map<string, string> {
  const root = JSON.parse(readRepoFile('package.json')) as { workspaces: string[] };
  return new Map(
    root.workspaces.map((folder) => [
      (JSON.parse(readRepoFile(path.join(folder, 'package.json'))) as { name: string }).name,
      folder,
    ]),
  );
}
