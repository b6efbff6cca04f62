/**
 * The webhooks repository's queries against real PostgreSQL where the HTTP suites do not reach
 * them: the count behind the per-project limit, a delivery failed for good is never claimed again,
 * a lease keeps a claimed delivery from a second claim, webhooks in flight are skipped, and
 * deliveries are queued per webhook of the event's project only, in the caller's transaction,
 * many events in one statement.
 */
import { randomUUID } from 'node:crypto';
import { createDataSource } from '../src/database/data-source';
import { migrateUp } from '../src/database/migrate';
import { WebhooksRepository } from '../src/webhooks/webhooks.repository';
import { createTestDatabase, type TestDatabase } from './support';

let database: TestDatabase;
let ds: ReturnType<typeof createDataSource>;
let repository: WebhooksRepository;

async function project(slug: string): Promise<string> {
  const [row] = (await ds.query(`INSERT INTO projects (slug, name) VALUES ($1, $1) RETURNING id`, [slug])) as Array<{
    id: string;
  }>;
  return (row as { id: string }).id;
}

/** Event ids by name. */
const events = new Map<string, string>();
const event = (name: string): string => {
  if (!events.has(name)) events.set(name, randomUUID());
  return events.get(name) as string;
};

/** The same body in every format, marked with the format. */
function bodiesOf(body: string): { json: string; slack: string; teams: string } {
  return { json: body, slack: `slack:${body}`, teams: `teams:${body}` };
}

/** Queues event `name` for every webhook of `projectId`. @returns how many deliveries were queued. */
function queue(projectId: string, name: string): Promise<number> {
  const eventId = event(name);
  return ds.transaction((manager) =>
    repository.queue(
      projectId,
      [{ id: eventId, type: 'proposal.step', bodies: bodiesOf(`{"id":"${eventId}"}`) }],
      manager,
    ),
  );
}

beforeAll(async () => {
  database = await createTestDatabase();
  ds = createDataSource(database.url, { poolSize: 2 });
  await ds.initialize();
  await migrateUp(ds);
  repository = new WebhooksRepository(ds);
});
afterAll(async () => {
  await ds.destroy();
  await database.drop();
});

describe('WebhooksRepository', () => {
  it('counts, lists and removes the webhooks of one project', async () => {
    const one = await project('count-one');
    const two = await project('count-two');
    expect(await repository.count(one)).toBe(0);
    const first = await repository.insert(one, 'https://a.example/hook', 's1', 'ann');
    const second = await repository.insert(one, 'https://b.example/hook', 's2', 'bob');
    await repository.insert(two, 'https://c.example/hook', 's3', 'ann');
    expect(await repository.count(one)).toBe(2);
    expect((await repository.list(one)).map((w) => w.url)).toEqual([
      'https://a.example/hook',
      'https://b.example/hook',
    ]);
    expect(await repository.exists(two, first.id)).toBe(false);
    expect(await repository.remove(two, first.id)).toBeNull();
    expect(await repository.remove(one, first.id)).toBe('https://a.example/hook');
    expect(await repository.exists(one, first.id)).toBe(false);
    expect(await repository.exists(one, second.id)).toBe(true);
    expect(await repository.count(one)).toBe(1);
  });

  it("queues an event once per webhook of its project, only if the caller's transaction commits", async () => {
    const one = await project('queue-one');
    const two = await project('queue-two');
    const a = await repository.insert(one, 'https://a.example/hook', 's', 'ann');
    const b = await repository.insert(one, 'https://b.example/hook', 's', 'ann');
    await repository.insert(two, 'https://c.example/hook', 's', 'ann');
    expect(await queue(one, 'e1')).toBe(2);
    await expect(
      ds.transaction(async (manager) => {
        await repository.queue(one, [{ id: event('e2'), type: 'proposal.step', bodies: bodiesOf('{}') }], manager);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    for (const hook of [a, b])
      expect((await repository.deliveries(hook.id, 10)).map((d) => d.eventId)).toEqual([event('e1')]);
    expect(await queue(await project('queue-none'), 'e3')).toBe(0);
  });

  it('queues each webhook the body of its format', async () => {
    const one = await project('queue-formats');
    const hooks = {
      json: await repository.insert(one, 'https://a.example/hook', 's', 'ann'),
      slack: await repository.insert(one, 'https://b.example/hook', 's', 'ann', 'slack'),
      teams: await repository.insert(one, 'https://c.example/hook', 's', 'ann', 'teams'),
    };
    expect((await repository.list(one)).map((w) => w.format)).toEqual(['json', 'slack', 'teams']);
    expect(await queue(one, 'f1')).toBe(3);
    const queued = (await ds.query(
      'SELECT webhook_id AS "webhookId", body FROM webhook_deliveries WHERE event_id = $1',
      [event('f1')],
    )) as Array<{ webhookId: string; body: string }>;
    const bodyOf = (id: string): string | undefined => queued.find((d) => d.webhookId === id)?.body;
    expect(bodyOf(hooks.json.id)).toBe(`{"id":"${event('f1')}"}`);
    expect(bodyOf(hooks.slack.id)).toBe(`slack:{"id":"${event('f1')}"}`);
    expect(bodyOf(hooks.teams.id)).toBe(`teams:{"id":"${event('f1')}"}`);
  });

  it('queues many events in one statement: each once per webhook, with its own body, in the order given', async () => {
    const one = await project('queue-many');
    const hooks = [
      await repository.insert(one, 'https://a.example/hook', 's', 'ann'),
      await repository.insert(one, 'https://b.example/hook', 's', 'ann', 'slack'),
    ];
    const names = ['m1', 'm2', 'm3'];
    const queued = await ds.transaction((manager) =>
      repository.queue(
        one,
        names.map((name) => ({
          id: event(name),
          type: 'version.changed',
          bodies: bodiesOf(`{"id":"${event(name)}"}`),
        })),
        manager,
      ),
    );
    expect(queued).toBe(6);
    const rows = (await ds.query(
      'SELECT webhook_id AS "webhookId", event_id AS "eventId", body FROM webhook_deliveries WHERE event_id = ANY($1::uuid[]) ORDER BY seq',
      [names.map(event)],
    )) as Array<{ webhookId: string; eventId: string; body: string }>;
    for (const [h, hook] of hooks.entries())
      expect(rows.filter((r) => r.webhookId === hook.id)).toEqual(
        names.map((name) => ({
          webhookId: hook.id,
          eventId: event(name),
          body: `${h === 0 ? '' : 'slack:'}{"id":"${event(name)}"}`,
        })),
      );
  });

  it('claims a due delivery once while leased, skips webhooks in flight, never claims a failed one', async () => {
    const one = await project('claim');
    const hook = await repository.insert(one, 'https://a.example/hook', 'secret', 'ann');
    await queue(one, 'c1');
    const ours = async (skip: readonly string[] = []): Promise<string[]> =>
      (await repository.claimDue(10, 120, skip)).filter((d) => d.webhookId === hook.id).map((d) => d.body);

    expect(await ours([hook.id])).toEqual([]);
    const [claimed] = (await repository.claimDue(10, 120, [])).filter((d) => d.webhookId === hook.id);
    expect(claimed).toMatchObject({
      url: 'https://a.example/hook',
      secret: 'secret',
      type: 'proposal.step',
      attempts: 1,
    });
    // Leased: not claimed again until the lease ends.
    expect(await ours()).toEqual([]);

    await repository.attemptFailed(claimed?.id as string, {
      status: 'pending',
      lastStatus: 503,
      lastError: 'receiver answered 503',
      retryInMs: 0,
    });
    const [retried] = (await repository.claimDue(10, 120, [])).filter((d) => d.webhookId === hook.id);
    expect(retried).toMatchObject({ id: claimed?.id, attempts: 2 });

    await repository.attemptFailed(retried?.id as string, {
      status: 'failed',
      lastStatus: null,
      lastError: 'no answer',
      retryInMs: 0,
    });
    expect(await ours()).toEqual([]);
    expect(await repository.deliveries(hook.id, 10)).toEqual([
      expect.objectContaining({ status: 'failed', attempts: 2, lastStatus: null, lastError: 'no answer' }),
    ]);

    await queue(one, 'c2');
    const [next] = (await repository.claimDue(10, 120, [])).filter((d) => d.webhookId === hook.id);
    await repository.delivered(next?.id as string, 204);
    expect((await repository.deliveries(hook.id, 1))[0]).toMatchObject({
      eventId: event('c2'),
      status: 'delivered',
      lastStatus: 204,
      lastError: null,
      deliveredAt: expect.any(Date),
    });
    expect(await ours()).toEqual([]);
  });
});
