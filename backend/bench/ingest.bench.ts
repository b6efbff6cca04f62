/**
 * Backend ingest benchmark, bounded (about a minute on 2 cores), all contenders in one run on one
 * embedded PostgreSQL: simulated agents stream batches over real WebSockets to the backend, against
 * the same rows written by a plain multi-row INSERT … ON CONFLICT through `pg` (alternating rounds,
 * medians, ratio).
 */
import { fingerprint, type WireObservation } from '@spectator/shared';
import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import type pg from 'pg';
import {
  loadAverage,
  median,
  plainInsert,
  requestShape,
  responseShape,
  runBench,
  SHAPES,
  withBenchBackend,
} from './harness';
import { connectTestAgent, helloMessage, type TestAgent } from '../test/support/agent-client';

const AGENTS = 4;
const BATCHES_PER_AGENT = 25;
const ROWS_PER_BATCH = 500;
const ROUNDS = 5;

/** The batches of one agent in one round: distinct keys over 2,000 paths so rows are both inserted and updated. */
function batchesFor(agent: number, round: number): WireObservation[][] {
  const now = new Date().toISOString();
  return Array.from({ length: BATCHES_PER_AGENT }, (_, b) =>
    Array.from({ length: ROWS_PER_BATCH }, (_, r): WireObservation => {
      const i = (agent * 7919 + round * 104_729 + b * ROWS_PER_BATCH + r) % 2000;
      return {
        method: 'POST',
        path: `/resource${i}`,
        status: r % 10 === 0 ? 400 : 201,
        query: [],
        requestHeaders: ['content-type'],
        responseHeaders: ['content-type'],
        request: { contentType: 'application/json', shape: fingerprint(requestShape) },
        response: { contentType: 'application/json', shape: fingerprint(responseShape) },
        count: 1 + (r % 3),
        firstSeen: now,
        lastSeen: now,
      };
    }),
  );
}

async function ingestThroughBackend(agents: TestAgent[], captureId: string, round: number): Promise<number> {
  // Serialised before the clock starts: the agents' own JSON work is not the backend's cost.
  const work = agents.map((_, a) =>
    batchesFor(a, round).map((observations) =>
      JSON.stringify({ type: 'batch', batchId: randomUUID(), captureId, shapes: {}, observations }),
    ),
  );
  const started = performance.now();
  await Promise.all(
    agents.map(async (agent, a) => {
      // Like the real agent: a window of batches in flight, each kept until its ack.
      const window = 8;
      let next = 0;
      const send = (): void => agent.send(work[a]?.[next++] as string);
      let inFlight = 0;
      while (next < BATCHES_PER_AGENT && inFlight < window) {
        send();
        inFlight++;
      }
      while (inFlight > 0) {
        const message = await agent.next(60_000);
        if (message.type !== 'ack') throw new Error(`unexpected ${JSON.stringify(message)}`);
        inFlight--;
        if (next < BATCHES_PER_AGENT) {
          send();
          inFlight++;
        }
      }
    }),
  );
  return (AGENTS * BATCHES_PER_AGENT * ROWS_PER_BATCH) / ((performance.now() - started) / 1000);
}

async function ingestPlain(pool: pg.Pool, captureId: string, round: number): Promise<number> {
  const work = Array.from({ length: AGENTS }, (_, a) => batchesFor(a, round));
  const started = performance.now();
  await Promise.all(
    work.map(async (batches) => {
      const client = await pool.connect();
      try {
        for (const rows of batches) await plainInsert(client, captureId, rows);
      } finally {
        client.release();
      }
    }),
  );
  return (AGENTS * BATCHES_PER_AGENT * ROWS_PER_BATCH) / ((performance.now() - started) / 1000);
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on Linux's common builds). */
const CLOCK_TICKS = 100;

/** The fields of /proc/<pid>/stat after the command name (state, ppid, …), or null where there is none. */
async function procStat(pid: string | number): Promise<string[] | null> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat === null ? null : stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/**
 * CPU seconds used so far by the bench's PostgreSQL, from /proc (NaN without it): the postmaster's
 * own and that of its children, running (their utime and stime) or ended (the postmaster's cutime
 * and cstime: the backend's pool closes idle connections). Unlike rates, CPU per observation barely
 * moves with what else the machine runs.
 */
async function postgresCpuSeconds(postmaster: number): Promise<number> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  let ticks = Number.NaN;
  for (const entry of entries) {
    const fields = /^\d+$/.test(entry) ? await procStat(entry) : null;
    // ppid is the 2nd of these fields; utime, stime, cutime, cstime the 12th to 15th.
    if (fields === null) continue;
    const own = Number(fields[11]) + Number(fields[12]);
    if (Number(entry) === postmaster)
      ticks = (Number.isNaN(ticks) ? 0 : ticks) + own + Number(fields[13]) + Number(fields[14]);
    else if (Number(fields[1]) === postmaster) ticks = (Number.isNaN(ticks) ? 0 : ticks) + own;
  }
  return ticks / CLOCK_TICKS;
}

async function main(): Promise<void> {
  await withBenchBackend(AGENTS + 1, async ({ backend, pool, api }) => {
    const project = await api<{ id: string }>('POST', '/projects', { slug: 'bench', name: 'Bench' });
    const { token } = await api<{ token: string }>('POST', '/projects/bench/tokens', {
      name: 'bench agents',
      scope: 'agent',
    });
    await pool.query(
      `INSERT INTO shapes (fingerprint, shape) SELECT key, value FROM jsonb_each($1::jsonb) ON CONFLICT DO NOTHING`,
      [JSON.stringify(SHAPES)],
    );

    // Two sets of agents: staging (evidence is recorded in each batch's transaction, issue 5) and
    // local (captures only, no evidence), so the cost of each part shows.
    const sessions: Array<{ label: string; agents: TestAgent[]; captureId: string }> = [];
    for (const environment of [{ kind: 'staging' as const, build: 'bench' }, { kind: 'local' as const }]) {
      // One agent id for the set's connections: a capture is bound to the agent that opened it
      // (issue 15), so four connections into one capture are one agent's, as after reconnects.
      const hello = helloMessage({ environment, agentId: `bench-${environment.kind}` });
      const agents: TestAgent[] = [];
      for (let a = 0; a < AGENTS; a++) {
        const agent = await connectTestAgent(backend.url, token);
        await agent.request(hello);
        agents.push(agent);
      }
      sessions.push({ label: `backend (${environment.kind})`, agents, captureId: hello.capture.id });
    }
    const plainCapture = randomUUID();
    await pool.query(
      `INSERT INTO captures (id, project_id, environment_kind, environment_name, reason, started_at) VALUES ($1, $2, 'staging', 'staging', 'agent-start', now())`,
      [plainCapture, project.id],
    );

    const contenders: Array<{
      label: string;
      run: (round: number) => Promise<number>;
      rates: number[];
      nodeCpu: number;
      postgresCpu: number;
    }> = [
      ...sessions.map((session) => ({
        label: session.label,
        run: (round: number) => ingestThroughBackend(session.agents, session.captureId, round),
        rates: [] as number[],
        nodeCpu: 0,
        postgresCpu: 0,
      })),
      {
        label: 'plain INSERT … ON CONFLICT',
        run: (round: number) => ingestPlain(pool, plainCapture, round),
        rates: [] as number[],
        nodeCpu: 0,
        postgresCpu: 0,
      },
    ];
    const [{ pid }] = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
    const postmaster = Number((await procStat(pid))?.[1]);
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate the order so no contender always gets the warmer database.
      for (let k = 0; k < contenders.length; k++) {
        const contender = contenders[(round + k) % contenders.length] as (typeof contenders)[number];
        const nodeBefore = process.cpuUsage();
        const postgresBefore = await postgresCpuSeconds(postmaster);
        contender.rates.push(await contender.run(round));
        const node = process.cpuUsage(nodeBefore);
        contender.nodeCpu += (node.user + node.system) / 1e6;
        contender.postgresCpu += (await postgresCpuSeconds(postmaster)) - postgresBefore;
      }
      console.log(
        `round ${round + 1}: ${contenders.map((c) => `${c.label} ${c.rates[round]?.toFixed(0)} obs/s`).join(', ')}`,
      );
    }
    await Promise.all(sessions.flatMap((session) => session.agents.map((agent) => agent.close())));
    const plainRates = contenders[contenders.length - 1]?.rates ?? [];
    const plainMedian = median(plainRates);
    console.log(
      `ingest (${AGENTS} agents × ${BATCHES_PER_AGENT} batches × ${ROWS_PER_BATCH} observations per round, medians of ${ROUNDS} rounds, aim ≥ 0.50 of plain):`,
    );
    for (const contender of contenders) {
      const rate = median(contender.rates);
      // Each round's own ratio too: the machine's load moves both contenders of a round alike.
      const perRound = contender.rates.map((r, round) => (r / (plainRates[round] as number)).toFixed(2)).join(' ');
      console.log(
        `  ${contender.label.padEnd(28)} ${rate.toFixed(0).padStart(7)} obs/s  ratio to plain ${(rate / plainMedian).toFixed(2)}  (per round ${perRound})`,
      );
    }
    // CPU per 1,000 observations: this process (backend and simulated agents, or the plain writer) and PostgreSQL.
    const thousands = (ROUNDS * AGENTS * BATCHES_PER_AGENT * ROWS_PER_BATCH) / 1000;
    for (const contender of contenders) {
      console.log(
        `  ${contender.label.padEnd(28)} CPU per 1,000 observations: node ${((contender.nodeCpu / thousands) * 1000).toFixed(1)} ms, postgres ${((contender.postgresCpu / thousands) * 1000).toFixed(1)} ms`,
      );
    }
    console.log(`  load average ${loadAverage()}`);
  });
}

runBench(main);
