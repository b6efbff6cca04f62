/**
 * runtime-gate.test's traffic in a process of its own: `gate-traffic.ts <backend url> <agent token>
 * <runs as JSON>`. Starts each run's app (an orders API answering after a deliberate delay) behind
 * a real agent, calls them in turn, one request in flight at a time, closes the agents (which
 * flushes them) and prints `done`. Out of the jest process, the agents' clocks do not wait on the
 * backend's work (ingest, folds), which at a load of 25 swamped the +50 ms the test looks for.
 */
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startAgent } from '@spectator/agent';
import type { AgentEnvironment } from '@spectator/shared';

/** One app version behind a real agent for one environment, sent `requests` calls of each endpoint. */
export interface GateRun {
  environment: AgentEnvironment;
  ordersDelayMs: number;
  /** Every n-th order is answered 500. */
  failEvery?: number;
  requests: number;
}

/** The orders API as one version of the app leaves it: GET /orders/{orderId} and GET /items. */
async function startShop(ordersDelayMs: number, failEvery = 0): Promise<{ server: Server; url: string }> {
  let orders = 0;
  const server = createServer((request, response) => {
    const isOrder = request.url?.startsWith('/orders/') ?? false;
    const fail = isOrder && failEvery > 0 && ++orders % failEvery === 0;
    setTimeout(
      () => {
        response.writeHead(fail ? 500 : 200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(fail ? { error: 'down' } : isOrder ? { id: 'o-1', total: 3 } : [{ id: 'i-1' }]));
      },
      isOrder ? ordersDelayMs : 5,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

async function main(backendUrl: string, agentToken: string, runs: readonly GateRun[]): Promise<void> {
  const apps = await Promise.all(runs.map((run) => startShop(run.ordersDelayMs, run.failEvery)));
  const agents = await Promise.all(
    runs.map((run, i) =>
      startAgent({
        listen: '127.0.0.1:0',
        upstream: apps[i]!.url,
        backend: backendUrl,
        token: agentToken,
        environment: run.environment,
        configPath: path.join(os.tmpdir(), 'spectator-no-service.yml'),
        logLevel: 'silent',
        tuning: { ackWaitMs: 20_000 },
      }),
    ),
  );
  try {
    // Each run's requests spread evenly over the rounds of the largest, so production's 400 and a
    // pull request's 100 meet the same moments of the machine's load.
    const rounds = Math.max(...runs.map((run) => run.requests));
    const sent = runs.map(() => 0);
    for (let n = 0; n < rounds; n++)
      for (const [i, run] of runs.entries()) {
        const due = Math.floor(((n + 1) * run.requests) / rounds);
        for (; sent[i]! < due; sent[i]! += 1)
          for (const route of [`/orders/${sent[i]}`, '/items']) {
            const response = await fetch(`${agents[i]!.proxyUrl}${route}`);
            await response.arrayBuffer();
          }
      }
  } finally {
    await Promise.all(agents.map((agent) => agent.close()));
    for (const app of apps) {
      app.server.closeAllConnections();
      app.server.close();
    }
  }
}

const [backendUrl, agentToken, runsJson] = process.argv.slice(2);
main(backendUrl!, agentToken!, JSON.parse(runsJson!) as GateRun[]).then(
  () => process.stdout.write('done\n'),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
