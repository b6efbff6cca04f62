import { fingerprint, inferShape } from '@spectator/shared';
import pino from 'pino';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { AgentsService } from '../agents/agents.service';
import type { CapturesRepository } from '../captures/captures.repository';
import type { Runtime } from '../config/runtime';
import type { EndpointsService } from '../endpoints/endpoints.service';
import type { EventsService } from '../events/events.service';
import type { EvidenceService } from '../evidence/evidence.service';
import { MetricsService } from '../health/metrics.service';
import type { RegroupService } from '../paths/regroup.service';
import type { ProjectsService } from '../projects/projects.service';
import type { EvidenceFolder } from './evidence-folder';
import type { IngestRepository } from './ingest.repository';
import { type AgentSession, IngestService } from './ingest.service';
import { parseAgentMessage } from './wire-validation';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const CAPTURE = '00000000-0000-4000-8000-000000000002';
const shape = fingerprint(inferShape({ title: 't' }));

/**
 * A batch in flight (issue 20): while its statement waits for a database connection and runs,
 * the ingest holds the statement's parameters and nothing of the objects the batch was parsed
 * into, so the up to MAX_MESSAGES_HANDLED batches a replica has in flight are not copied by every
 * young-generation collection meanwhile. The database is a stand-in whose write ends when the
 * test says; the other services answer as for a capture already known (plain functions, not
 * mocks: a mock would keep its arguments).
 */
describe('a batch waiting for its statement', () => {
  it('holds none of its parsed objects', async () => {
    let writeStarted!: () => void;
    const started = new Promise<void>((resolve) => (writeStarted = resolve));
    let endWrite!: (result: { claimed: boolean; queuedId: string | null }) => void;
    const captures = {
      storedFingerprints: (fingerprints: string[]) => Promise.resolve(fingerprints),
      writeBatches: (parts: unknown[]) => {
        expect(parts.length).toBe(1);
        writeStarted();
        return new Promise<Array<{ claimed: boolean; captured: boolean; queuedId: string | null }>>(
          (resolve) => (endWrite = (result) => resolve([{ ...result, captured: true }])),
        );
      },
    } as unknown as CapturesRepository;
    const evidence = {
      queuedEvidence: () =>
        Promise.resolve({ rowId: 'row', build: 'b1', commit: null, exchanges: '[]', minutes: '[]', consumers: '[]' }),
    } as unknown as EvidenceService;
    const runtime = {
      log: pino({ level: 'silent' }),
      config: { maxEndpointsPerCapture: 20_000 },
    } as unknown as Runtime;
    const service = new IngestService(
      { knownTemplates: () => Promise.resolve([]) } as unknown as IngestRepository,
      {} as AgentsService,
      captures,
      {} as ProjectsService,
      {} as EndpointsService,
      { captureChanged: () => undefined } as unknown as EventsService,
      new MetricsService(),
      evidence,
      {} as RegroupService,
      { settle: () => Promise.resolve() } as unknown as EvidenceFolder,
      runtime,
    );
    const session: AgentSession = {
      projectId: 'p',
      projectSlug: 'p',
      agentRowId: 'a',
      environment: { kind: 'production', build: 'b1' },
      rules: [],
      knownCaptures: new Set([CAPTURE]),
      learned: new Map([[CAPTURE, []]]),
    };
    const now = new Date().toISOString();
    const observations = Array.from({ length: 40 }, (_, i) => ({
      method: 'POST',
      path: `/r${i}`,
      status: 201,
      query: [],
      requestHeaders: ['content-type'],
      responseHeaders: [],
      request: { contentType: 'application/json', shape },
      response: null,
      count: 1,
      firstSeen: now,
      lastSeen: now,
    }));
    const text = JSON.stringify({
      type: 'batch',
      batchId: '00000000-0000-4000-8000-000000000001',
      captureId: CAPTURE,
      shapes: {},
      observations,
    });
    // The parsed message is referred to only by the ingest from here on.
    const parsed = (): { ingested: ReturnType<IngestService['ingestBatch']>; kept: WeakRef<object>[] } => {
      const message = parseAgentMessage(text);
      if (message.type !== 'batch') throw new Error('not a batch');
      const kept = [new WeakRef(message), new WeakRef(message.observations), new WeakRef(message.observations[0]!)];
      return { ingested: service.ingestBatch(session, message), kept };
    };
    const { ingested, kept } = parsed();
    await started;
    // Weak references keep their targets until the job that made them ends.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(kept.map((ref) => ref.deref() === undefined)).toEqual([true, true, true]);
    endWrite({ claimed: true, queuedId: '7' });
    const { duplicate, ackAfterFold } = await ingested;
    expect({ duplicate, ackAfterFold }).toEqual({ duplicate: false, ackAfterFold: false });
  });
});
