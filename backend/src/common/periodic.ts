import type { Logger } from 'pino';

/**
 * Runs `work` now (in the background) and then every `intervalMs` after each run ends, until
 * stopped; a failure is logged and the next run still comes. Timers never keep the process alive.
 */
export class PeriodicJob {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly what: string,
    private readonly intervalMs: number,
    private readonly work: () => Promise<unknown>,
    private readonly log: Logger,
  ) {}

  /** Starts the schedule: the first run at once, or after `firstInMs` (when the caller just did the work). */
  start(firstInMs = 0): void {
    this.schedule(firstInMs);
  }

  /** Whether `stop` was called: long work checks it between chunks. */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** Stops the schedule and waits for a run under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.running = this.work()
        .then(() => undefined)
        .catch((error: unknown) => this.log.warn({ err: error }, `${this.what} failed`))
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.schedule(this.intervalMs);
        });
    }, delayMs);
    this.timer.unref();
  }
}
