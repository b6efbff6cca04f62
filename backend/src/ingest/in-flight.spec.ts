import { type BatchMessage, fingerprint, inferShape } from '@spectator/shared';
import pino from 'pino';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { AgentsService } from '../agents/agents.service';
import type { BatchPart } from '../captures/batch-statement';
import type { CapturesRepository } from '../captures/captures.repository';
import type { Runtime } from '../config/runtime';
import type { EndpointsService } from '../endpoints/endpoints.service';
import type { EventsService } from '../events/events.service';
import type { EvidenceService } from '../evidence/evidence.service';
import { MetricsService } from '../health/metrics.service';
import type { RegroupService } from '../paths/regroup.service';
import type { ProjectsService } from '../projects/projects.service';
import type { EvidenceFolder } from './evidence-folder';
import type { IngestRepository, KnownTemplate } from './ingest.repository';
import { type AgentSession, IngestService, KNOWN_TEMPLATES_MS } from './ingest.service';
import { parseAgentMessage } from './wire-validation';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const CAPTURE = '00000000-0000-4000-8000-000000000002';
const BATCH = '00000000-0000-4000-8000-000000000001';
const shape = fingerprint(inferShape({ title: 't' }));

/** A batch statement's answer, as the stand-in database gives it. */
type Written = { claimed: boolean; captured: boolean; queuedId: string | null };

/**
 * An ingest whose database is a stand-in (`writeBatches`, `knownTemplates`); the other services
 * answer as for a capture already known (plain functions, not mocks: a mock would keep its arguments).
 */
function ingestWith(
  writeBatches: (parts: BatchPart[]) => Promise<Written[]>,
  knownTemplates: () => Promise<KnownTemplate[]> = () => Promise.resolve([]),
): IngestService {
  const captures = {
    storedFingerprints: (fingerprints: string[]) => Promise.resolve(fingerprints),
    writeBatches,
  } as unknown as CapturesRepository;
  const evidence = {
    queuedEvidence: () =>
      Promise.resolve({ rowId: 'row', build: 'b1', commit: null, exchanges: '[]', minutes: '[]', consumers: '[]' }),
  } as unknown as EvidenceService;
  const runtime = {
    log: pino({ level: 'silent' }),
    config: { maxEndpointsPerCapture: 20_000 },
  } as unknown as Runtime;
  return new IngestService(
    { knownTemplates } as unknown as IngestRepository,
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
}

function newSession(): AgentSession {
  return {
    projectId: 'p',
    projectSlug: 'p',
    agentRowId: 'a',
    environment: { kind: 'production', build: 'b1' },
    rules: [],
    knownCaptures: new Set([CAPTURE]),
    learned: new Map([[CAPTURE, []]]),
  };
}

/** A batch's text: 40 rows of literal paths `/r0`… (or those given). */
function batchText(paths = Array.from({ length: 40 }, (_, i) => `/r${i}`), batchId = BATCH): string {
  const now = new Date().toISOString();
  const observations = paths.map((path) => ({
    method: 'POST',
    path,
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
  return JSON.stringify({ type: 'batch', batchId, captureId: CAPTURE, shapes: {}, observations });
}

function batchOf(text: string): BatchMessage {
  const message = parseAgentMessage(text);
  if (message.type !== 'batch') throw new Error('not a batch');
  return message;
}

/**
 * A batch in flight (issue 20): while its statement waits for a database connection and runs,
 * the ingest holds the statement's parameters and nothing of the objects the batch was parsed
 * into, so the up to MAX_MESSAGES_HANDLED batches a replica has in flight are not copied by every
 * young-generation collection meanwhile. The database is a stand-in whose write ends when the
 * test says.
 */
describe('a batch waiting for its statement', () => {
  it('holds none of its parsed objects', async () => {
    let writeStarted!: () => void;
    const started = new Promise<void>((resolve) => (writeStarted = resolve));
    let endWrite!: (result: { claimed: boolean; queuedId: string | null }) => void;
    const service = ingestWith((parts) => {
      expect(parts.length).toBe(1);
      writeStarted();
      return new Promise<Written[]>((resolve) => (endWrite = (result) => resolve([{ ...result, captured: true }])));
    });
    const session = newSession();
    const text = batchText();
    // The parsed message is referred to only by the ingest from here on.
    const parsed = (): { ingested: ReturnType<IngestService['ingestBatch']>; kept: WeakRef<object>[] } => {
      const message = batchOf(text);
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
    expect(await ingested).toEqual({ duplicate: false });
  });
});

/**
 * The project's path hints, read again past KNOWN_TEMPLATES_MS: batches go on with the read before
 * while the new one is under way (issue 20: waiting held every batch of the project meanwhile),
 * and use the new one once read.
 */
describe("a project's path hints read again", () => {
  afterEach(() => jest.restoreAllMocks());

  it('hold no batch: the read before is used until the new one comes', async () => {
    let now = 0;
    jest.spyOn(performance, 'now').mockImplementation(() => now);
    const reads: Array<(templates: KnownTemplate[]) => void> = [];
    const written: string[] = [];
    const service = ingestWith(
      (parts) => {
        written.push(...parts.map((part) => part.columns[1] as string));
        return Promise.resolve(parts.map(() => ({ claimed: true, captured: true, queuedId: null })));
      },
      () => new Promise((resolve) => reads.push(resolve)),
    );
    const session = newSession();
    const ingest = (batchId: string): ReturnType<IngestService['ingestBatch']> =>
      service.ingestBatch(session, batchOf(batchText(['/users/alice'], batchId)));
    // The first read is waited for.
    const first = ingest('00000000-0000-4000-8000-000000000011');
    await new Promise((resolve) => setImmediate(resolve));
    expect(reads).toHaveLength(1);
    reads[0]!([]);
    await first;
    // Past the bound: read again, and the batch is written with the read before meanwhile.
    now = KNOWN_TEMPLATES_MS + 1;
    await ingest('00000000-0000-4000-8000-000000000012');
    expect(reads).toHaveLength(2);
    await ingest('00000000-0000-4000-8000-000000000013');
    expect(reads).toHaveLength(2);
    // Once read, the hint is used.
    reads[1]!([{ template: '/users/{user}', documented: false }]);
    await new Promise((resolve) => setImmediate(resolve));
    await ingest('00000000-0000-4000-8000-000000000014');
    expect(written).toEqual(['"/users/alice"', '"/users/alice"', '"/users/alice"', '"/users/{user}"']);
  });
});
