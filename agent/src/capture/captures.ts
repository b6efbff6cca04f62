import { randomUUID } from 'node:crypto';
import type { CaptureMessage, CaptureReason, WireCapture } from '@spectator/shared';

/** The current capture: one run of the observed app. */
export class Captures {
  private currentCapture: WireCapture;
  private started = 1;

  constructor(private readonly now: () => Date = () => new Date()) {
    this.currentCapture = { id: randomUUID(), startedAt: this.now().toISOString(), reason: 'agent-start' };
  }

  get current(): WireCapture {
    return this.currentCapture;
  }

  /** How many captures this agent started (the first included). */
  get count(): number {
    return this.started;
  }

  /** End the current capture and start the next; returns the message announcing it. */
  next(reason: CaptureReason): CaptureMessage {
    const previous = this.currentCapture;
    const at = this.now().toISOString();
    this.currentCapture = { id: randomUUID(), startedAt: at, reason };
    this.started++;
    return { type: 'capture', capture: this.currentCapture, previous: { id: previous.id, endedAt: at } };
  }
}
