import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { Logger } from './log';
import { appEnv } from './malloc';

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
  /** How long the app's processes get after SIGTERM before SIGKILL, ms. Default 10 s. */
  graceMs?: number;
}

/** How often a process group that was told to stop is looked at, ms. */
const GROUP_POLL_MS = 50;

/**
 * Runs the observed app (`spectator-agent … -- <command>`): starts it with `PORT`, restarts it
 * when it exits (with backoff when it keeps exiting quickly) or on `restart()` (SIGHUP), and
 * forwards signals. Each restart starts a new capture.
 *
 * The command runs in a process group of its own, and every signal goes to the whole group: with
 * `npm start`, the app is a grandchild (npm → sh -c → node) that a signal to npm alone does not
 * reach, so it would outlive the agent and keep its port. A stop, a restart or an exit of the
 * command's first process ends the whole group (SIGTERM, SIGKILL after the grace period) before
 * anything new starts, and the agent's own exit kills what is left.
 */
export class CommandSupervisor {
  private group: ProcessGroup | null = null;
  private stopping = false;
  private restarts = 0;
  private startedAt = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private exited: Promise<void> = Promise.resolve();
  /** On the agent's own exit (a crash included), nothing of the command may be left running. */
  private readonly killOnExit = (): void => this.group?.signal('SIGKILL');

  constructor(private readonly options: SupervisorOptions) {}

  /** Process id of the running app's first process (also its process group id), if any. */
  get pid(): number | undefined {
    return this.group?.id;
  }

  start(): void {
    const [program, ...args] = this.options.command as [string, ...string[]];
    const port = String(this.options.port);
    // detached: a new session and process group led by the child (POSIX setsid), so the group can be signalled.
    const child = spawn(
      program,
      args.map((arg) => arg.replaceAll('{PORT}', port)),
      {
        stdio: this.options.stdio ?? 'inherit',
        env: { ...appEnv(process.env), PORT: port },
        detached: process.platform !== 'win32',
      },
    );
    child.once('error', (err: NodeJS.ErrnoException) => {
      this.options.log.error({ code: err.code, command: program }, 'cannot start app');
    });
    const group = child.pid === undefined ? null : new ProcessGroup(child.pid, child);
    this.group = group;
    this.startedAt = Date.now();
    // A command that could not start (not found) has no process to wait for; it is not retried.
    if (!group) {
      this.exited = Promise.resolve();
      return;
    }
    process.once('exit', this.killOnExit);
    this.options.log.info({ pid: group.id, command: program }, 'app started');
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        if (!this.stopping) this.options.log.warn({ code, signal }, 'app exited; restarting it');
        // The first process is gone; what it started may not be (npm → sh → node keeps the port).
        void group.end(this.graceMs).then(() => {
          if (this.group === group) this.group = null;
          process.removeListener('exit', this.killOnExit);
          resolve();
          if (!this.stopping) this.scheduleRestart();
        });
      });
    });
  }

  /** Stop the app (its whole process group) and start it again (a new capture). */
  async restart(): Promise<void> {
    const group = this.group;
    if (!group) return;
    this.restarts = 0;
    await Promise.all([group.end(this.graceMs), this.exited]);
  }

  /** Pass a signal on to the app's process group. */
  signal(signal: NodeJS.Signals): void {
    this.group?.signal(signal);
  }

  /** Stop for good: SIGTERM to the app's process group, SIGKILL after `graceMs`; resolves when none of it is left. */
  async stop(graceMs = this.graceMs): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const group = this.group;
    if (!group) return;
    await Promise.all([group.end(graceMs), this.exited]);
  }

  private get graceMs(): number {
    return this.options.graceMs ?? 10_000;
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

/** The process group a command was started in (its id is the first process's pid). */
class ProcessGroup {
  private ending: Promise<void> | null = null;

  constructor(
    readonly id: number,
    private readonly leader: ChildProcess,
  ) {}

  /** Send `signal` to every process of the group; a group already gone is fine. */
  signal(signal: NodeJS.Signals): void {
    try {
      if (process.platform === 'win32') this.leader.kill(signal);
      else process.kill(-this.id, signal);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }

  /** SIGTERM once, SIGKILL to whatever is left after `graceMs`; resolves when no process of the group runs. */
  end(graceMs: number): Promise<void> {
    return (this.ending ??= this.terminate(graceMs));
  }

  private async terminate(graceMs: number): Promise<void> {
    const killAt = Date.now() + graceMs;
    this.signal('SIGTERM');
    let killed = false;
    while (this.alive()) {
      if (!killed && Date.now() >= killAt) {
        this.signal('SIGKILL');
        killed = true;
      }
      await new Promise((resolve) => setTimeout(resolve, GROUP_POLL_MS));
    }
  }

  /** Whether a process of the group still runs (zombies, waiting to be reaped, hold nothing and do not count). */
  private alive(): boolean {
    if (process.platform === 'win32') return this.leader.exitCode === null && this.leader.signalCode === null;
    try {
      process.kill(-this.id, 0);
    } catch {
      return false;
    }
    return process.platform === 'linux' ? runningMembers(this.id) > 0 : true;
  }
}

/**
 * Processes of process group `pgid` that are not zombies, from /proc (Linux). A zombie still
 * answers `kill(-pgid, 0)`; one whose parent never reaps it (the agent as PID 1 in a container)
 * would otherwise keep a stop waiting forever.
 */
function runningMembers(pgid: number): number {
  let count = 0;
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return 1;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses, so read after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') count++;
  }
  return count;
}
