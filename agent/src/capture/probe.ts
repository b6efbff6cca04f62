import net from 'node:net';
import type { Logger } from '../log';
import type { Metrics } from '../metrics';

export type UpstreamState = 'unknown' | 'up' | 'down';

/**
 * A light periodic TCP probe of the upstream. When the upstream, after answering during the
 * current capture, stops answering and then answers again (a rebuild or restart behind the
 * sidecar), `onReturn` is called so a new capture starts — even if no request arrives meanwhile.
 */
export class UpstreamProbe {
  private state: UpstreamState = 'unknown';
  /** The upstream answered at least once since the current capture started. */
  private seenUp = false;
  private timer: NodeJS.Timeout | null = null;
  private probing = false;

  constructor(
    private readonly upstream: URL,
    private readonly intervalMs: number,
    private readonly log: Logger,
    private readonly metrics: Metrics,
    private readonly onReturn: () => void,
  ) {}

  get upstreamState(): UpstreamState {
    return this.state;
  }

  start(): void {
    void this.probe();
    this.timer = setInterval(() => void this.probe(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** A new capture started for another reason (command restart): forget what was seen. */
  reset(): void {
    this.seenUp = false;
    this.state = 'unknown';
  }

  /** The proxy saw the upstream refuse a connection. */
  markDown(): void {
    this.transition(false);
  }

  private async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      this.transition(await this.connects());
    } finally {
      this.probing = false;
    }
  }

  private connects(): Promise<boolean> {
    const port = Number(this.upstream.port) || (this.upstream.protocol === 'https:' ? 443 : 80);
    const host = this.upstream.hostname.replace(/^\[|\]$/g, '');
    return new Promise((resolve) => {
      const socket = net.connect({ host, port });
      const done = (up: boolean): void => {
        socket.destroy();
        resolve(up);
      };
      // A timeout is read only after the event loop's next look at the sockets (setImmediate runs
      // after the poll phase): when the loop was busy for longer than the timeout, the timer fires
      // before a connection that had long been made is seen, and a busy agent must not read as an
      // upstream that stopped answering (it would start a new capture).
      socket.setTimeout(Math.min(this.intervalMs, 2_000), () => setImmediate(() => done(false)));
      socket.once('connect', () => done(true));
      socket.once('error', () => done(false));
    });
  }

  private transition(up: boolean): void {
    const before = this.state;
    this.state = up ? 'up' : 'down';
    this.metrics.set('upstream_up', up ? 1 : 0);
    if (before === this.state) return;
    if (!up) {
      // An app that never answered yet is starting (the wrapped command, a CI job), not failing.
      if (this.seenUp) this.log.warn({ upstream: this.upstream.origin }, 'upstream stopped answering');
      else this.log.info({ upstream: this.upstream.origin }, 'waiting for the app to answer');
      return;
    }
    if (before === 'down' && this.seenUp) {
      this.log.info({ upstream: this.upstream.origin }, 'upstream answers again: starting a new capture');
      this.onReturn();
    } else {
      this.log.info({ upstream: this.upstream.origin }, 'upstream answers');
    }
    this.seenUp = true;
  }
}
