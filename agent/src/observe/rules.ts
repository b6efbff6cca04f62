import fs from 'node:fs';
import { parseServiceConfig, type IgnoreRule } from '@spectator/shared';
import type { Logger } from '../log';

/**
 * The ignore rules in effect, loaded from service.yml and reloaded when the file changes. A file
 * that does not parse keeps the last good rules; a bad entry is logged with its text while the
 * other entries apply. A missing file means no rules.
 */
export class IgnoreRules {
  private current: IgnoreRule[] = [];
  private currentPaths: string[] = [];
  private lastText: string | null = null;
  /** The file's absence was logged (and not followed by a file since). */
  private missingReported = false;
  private watching = false;

  /**
   * @param path service.yml
   * @param onChange told the entries now in effect after each successful reload.
   * @param pollMs how often the file's stat is checked (polling survives editors' atomic renames and Kubernetes ConfigMap symlink swaps), ms. Default 1000.
   */
  constructor(
    private readonly path: string,
    private readonly log: Logger,
    private readonly onChange: (sources: string[]) => void = () => undefined,
    private readonly pollMs = 1000,
    private readonly onPaths: (paths: string[]) => void = () => undefined,
  ) {}

  /** The path templates users stated (`paths:`), matched like documented templates. */
  get paths(): readonly string[] {
    return this.currentPaths;
  }

  /** Rules in effect now. */
  get rules(): readonly IgnoreRule[] {
    return this.current;
  }

  /** Source text of the rules in effect, as reported to the backend. */
  get sources(): string[] {
    return this.current.map((rule) => rule.source);
  }

  /** Load now and watch the file from here on. */
  start(): void {
    this.reload();
    fs.watchFile(this.path, { interval: this.pollMs, persistent: false }, this.changed);
    this.watching = true;
  }

  stop(): void {
    if (this.watching) fs.unwatchFile(this.path, this.changed);
    this.watching = false;
  }

  private readonly changed = (): void => {
    if (this.reload()) this.onChange(this.sources);
  };

  private setPaths(paths: string[]): void {
    if (paths.length === this.currentPaths.length && paths.every((p, i) => p === this.currentPaths[i])) return;
    this.currentPaths = paths;
    if (paths.length > 0) this.log.info({ path: this.path, paths }, 'path templates loaded');
    this.onPaths(paths);
  }

  /** @returns true when the rules in effect changed. */
  reload(): boolean {
    let text: string;
    try {
      text = fs.readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.log.error(
          { path: this.path, code: (err as NodeJS.ErrnoException).code },
          'cannot read service config; keeping the last good ignore rules',
        );
        return false;
      }
      // Said once per absence: the file watcher also reports a file that is missing from the start.
      if (this.lastText !== null) this.log.warn({ path: this.path }, 'service config removed; no ignore rules apply');
      else if (!this.missingReported) this.log.info({ path: this.path }, 'no service config; no ignore rules apply');
      this.missingReported = true;
      const changed = this.current.length > 0;
      this.current = [];
      this.lastText = null;
      this.setPaths([]);
      return changed;
    }
    this.missingReported = false;
    if (text === this.lastText) return false;
    try {
      const parsed = parseServiceConfig(text);
      for (const error of parsed.errors)
        this.log.error(
          { path: this.path, entry: error.entry, index: error.index, problem: error.message },
          'bad ignoreRequests entry skipped',
        );
      for (const error of parsed.pathErrors)
        this.log.error(
          { path: this.path, entry: error.entry, index: error.index, problem: error.message },
          'bad paths entry skipped',
        );
      this.current = parsed.rules;
      this.lastText = text;
      this.setPaths(parsed.paths);
      this.log.info({ path: this.path, rules: this.sources }, 'ignore rules loaded');
      return true;
    } catch (err) {
      this.log.error(
        { path: this.path, problem: (err as Error).message },
        'service config is invalid; keeping the last good ignore rules',
      );
      return false;
    }
  }
}
