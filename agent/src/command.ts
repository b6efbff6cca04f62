import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from './log';

export interface SupervisorOptions {
  /** Program and arguments; `{PORT}` in an argument is replaced by the port. */
  command: string[];
  /** Passed as `PORT` in the environment. */
  port: number;
  log: Logger;
  /** Called before each start after the first (a restart): a new capture begins. */
  onRestart: () => void;
  /** Where the app's output goes. Default: inherited. */
  stdio?: 'inherit' | 'ignore';
  /** First restart delay after an exit, doubled per quick exit up to 30 s, ms. Default 500. */
  restartDelayMs?: number;
}

/**
 * Runs the observed app (`spectator-agent … -- <command>`): starts it with `PORT`, restarts it
 * when it exits (with backoff when it keeps exiting quickly) or on `restart()` (SIGHUP), and
 * forwards signals. Each restart starts a new capture.
 */
export class CommandSupervisor {
  private child: ChildProcess | null = null;
  private stopping = false;
  private restarts = 0;
  private startedAt = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private exited: Promise<void> = Promise.resolve();

  constructor(private readonly options: SupervisorOptions) {}

  /** Process id of the running app, if any. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    const [program, ...args] = this.options.command as [string, ...string[]];
    const port = String(this.options.port);
    const child = spawn(program, args.map((arg) => arg.replaceAll('{PORT}', port)), { stdio: this.options.stdio ?? 'inherit', env: { ...process.env, PORT: port } });
    this.child = child;
    this.startedAt = Date.now();
    this.options.log.info({ pid: child.pid, command: program }, 'app started');
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        if (this.child === child) this.child = null;
        resolve();
        if (this.stopping) return;
        this.options.log.warn({ code, signal }, 'app exited; restarting it');
        this.scheduleRestart();
      });
    });
    child.once('error', (err: NodeJS.ErrnoException) => {
      this.options.log.error({ code: err.code, command: program }, 'cannot start app');
    });
  }

  /** Stop the app and start it again (a new capture). */
  async restart(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.restarts = 0;
    child.kill('SIGTERM');
    await this.exited;
  }

  /** Pass a signal on to the app. */
  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  /** Stop for good: SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  private scheduleRestart(): void {
    // An app that ran a while gets restarted at once; one that keeps dying waits longer each time.
    if (Date.now() - this.startedAt > 10_000) this.restarts = 0;
    const delay = Math.min(30_000, (this.options.restartDelayMs ?? 500) * 2 ** this.restarts++);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping) return;
      this.options.onRestart();
      this.start();
    }, delay);
  }
}
