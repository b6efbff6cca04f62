/**
 * Chat formats of webhooks (docs/webhooks.md, "Chat formats"): one project with a Slack, a Teams
 * and a JSON webhook on a local receiver that checks every body against its format and answers
 * 400 to any that breaks it, as Slack and Teams do. Every event type is made for real: proposal
 * steps, a breaking change and drift reaching production, undocumented endpoints in production.
 */
import type { TokenResponse, WebhookDeliveryResponse, WebhookResponse } from '@spectator/shared';
import type { WebhookBody } from '../src/webhooks/transition-events';
import { startTestBackend, type TestBackend } from './support';
import { type ChatReceiver, startChatReceiver, teamsProblems } from './support/chat-receiver';
import { approveUsersPlan, eventually, report } from './support/evidence-helpers';

const PUBLIC_URL = 'https://spectator.example.com';
/** Slack's control characters in a title: a mention and a link that must arrive escaped, as text. */
const TITLE = 'Users: <!channel> & <https://evil.example|click>';

let backend: TestBackend;
let receiver: ChatReceiver;
let agentToken: string;
const hooks: Record<string, string> = {};

function production(build: string): { kind: 'production'; build: string; commit: string } {
  return { kind: 'production', build, commit: `c-${build}` };
}

/** The JSON events received so far, in order of arrival. */
function jsonEvents(): WebhookBody[] {
  return (receiver.received.get('/json') ?? []) as WebhookBody[];
}

beforeAll(async () => {
  backend = await startTestBackend({ publicUrl: `${PUBLIC_URL}/` });
  await backend.api('POST', '/projects', { slug: 'chat', name: 'Chat' });
  agentToken = (
    await backend.api<TokenResponse>('POST', '/projects/chat/tokens', { name: 'production agent', scope: 'agent' })
  ).body.token as string;
  receiver = await startChatReceiver(teamsProblems);
  for (const format of ['json', 'slack', 'teams']) {
    const created = await backend.api<WebhookResponse>('POST', '/projects/chat/webhooks', {
      url: `${receiver.url}/${format}`,
      format,
    });
    expect(created.status).toBe(201);
    expect(created.body.format).toBe(format);
    hooks[format] = created.body.id;
  }
});

afterAll(async () => {
  await backend.close();
  await receiver.close();
});

describe('chat formats', () => {
  it('lists each webhook with its format, and refuses an unknown one naming the formats', async () => {
    const listed = await backend.api<WebhookResponse[]>('GET', '/projects/chat/webhooks');
    expect(listed.body.map((hook) => hook.format)).toEqual(['json', 'slack', 'teams']);
    const refused = await backend.api<{ message: string }>('POST', '/projects/chat/webhooks', {
      url: `${receiver.url}/x`,
      format: 'discord',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('format must be one of json, slack, teams');
  });

  it('sends every event type in each format, each body valid for its format', async () => {
    // A proposal step (Approved), then production evidence: 1.0 first seen, Appeared in Production.
    await approveUsersPlan(backend, 'chat', TITLE, ['id', 'name']);
    await report(backend.url, agentToken, production('p-1'), [
      { method: 'GET', path: '/users', status: 200, response: [{ id: 1, name: 'a' }] },
    ]);
    // A breaking change (a response field removed: 2.0) that production then runs.
    await approveUsersPlan(backend, 'chat', 'Users lose their name', ['id']);
    await report(backend.url, agentToken, production('p-2'), [
      { method: 'GET', path: '/users', status: 200, response: [{ id: 1 }] },
    ]);
    // Drift: traffic no version allows. And two undocumented endpoints in production, then one of them again.
    await report(backend.url, agentToken, production('p-3'), [
      { method: 'GET', path: '/users', status: 200, response: [{ id: 1, nickname: 'x' }] },
      { method: 'POST', path: '/orders', status: 201, response: { id: 1 } },
      { method: 'GET', path: '/admin/stats', status: 200, response: { count: 1 } },
    ]);
    await report(backend.url, agentToken, production('p-4'), [
      { method: 'POST', path: '/orders', status: 201, response: { id: 2 } },
    ]);

    const headlines = (body: WebhookBody): string => {
      const data = body.data;
      if (data.type === 'proposal.step') return `step ${data.step}`;
      if (data.type === 'endpoints.undocumented') return `undocumented ${data.total}`;
      if (data.type === 'drift.appeared') return `drift appeared ${data.environment.name} ${data.since}`;
      return `version ${data.version}${data.breaking ? ' breaking' : ''}${data.drift ? ' drift' : ''}`;
    };
    const expected = [
      'step Approved',
      'version 1.0',
      'step Appeared in Production',
      'step Approved',
      'version 2.0 breaking',
      'step Appeared in Production',
      'version 2.0 drift',
      'undocumented 2',
    ];
    // drift.appeared too: it is sent after the drifting version.changed, and the chats' counts below
    // are only compared once every event they must show is in.
    const all = await eventually(
      () => jsonEvents().map(headlines),
      (seen) =>
        expected.every((headline) => seen.includes(headline)) &&
        seen.some((headline) => headline.startsWith('drift appeared p-3')),
    );
    // Each undocumented endpoint is announced once: p-4's POST /orders is not news.
    expect(all.filter((headline) => headline.startsWith('undocumented'))).toEqual(['undocumented 2']);
    // Events may still come (the evidence of the last batches is folded apart from their acks):
    // each format's receiver catches up with the JSON one, whatever the count is by then.
    // Chats get one message per event but a drifting version.changed: drift.appeared says it.
    const forChats = (): number =>
      jsonEvents().filter((body) => !(body.data.type === 'version.changed' && body.data.drift)).length;
    const count = forChats();
    await eventually(
      () => [receiver.received.get('/slack')?.length ?? 0, receiver.received.get('/teams')?.length ?? 0],
      ([slack, teams]) => slack === forChats() && teams === forChats(),
    );
    expect(receiver.problems).toEqual([]);

    const undocumented = jsonEvents().find((body) => body.type === 'endpoints.undocumented');
    expect(undocumented?.data).toEqual({
      type: 'endpoints.undocumented',
      environment: { kind: 'production', name: 'p-3' },
      build: 'p-3',
      commit: 'c-p-3',
      endpoints: [
        { method: 'GET', path: '/admin/stats' },
        { method: 'POST', path: '/orders' },
      ],
      total: 2,
    });

    // What a person reads: the headlines of the Slack messages and the Teams cards, in order.
    const slack = (receiver.received.get('/slack') ?? []) as Array<{
      text: string;
      blocks: Array<{ type: string; text?: { text: string }; elements?: Array<{ url: string }> }>;
    }>;
    const slackHeadlines = slack.map((message) => message.blocks[0]?.text?.text);
    expect(slackHeadlines).toEqual(
      expect.arrayContaining([
        'Proposal approved',
        'Breaking change in production: GET /users',
        'Drift began in production: GET /users',
        '2 undocumented endpoints in production',
        'Proposal step: Appeared in Production',
      ]),
    );
    const teams = (receiver.received.get('/teams') ?? []) as Array<{
      attachments: Array<{ content: { body: Array<{ text?: string }>; actions?: Array<{ url: string }> } }>;
    }>;
    expect(teams.map((message) => message.attachments[0]?.content.body[0]?.text)).toEqual(slackHeadlines);
    // The drift is told once, with where it began.
    expect(slackHeadlines.filter((headline) => headline?.startsWith('Drift'))).toEqual([
      'Drift began in production: GET /users',
    ]);
    // The title's control characters arrive escaped in Slack (no mention, no link), as written in Teams.
    const approved = slack.find((message) => message.text.includes('“Users:'));
    expect(approved?.blocks[1]?.text?.text).toContain('&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;');
    // Every message links to the dashboard screen it is about.
    const links = [
      ...slack.map((message) => message.blocks.find((block) => block.type === 'actions')?.elements?.[0]?.url),
      ...teams.map((message) => message.attachments[0]?.content.actions?.[0]?.url),
    ];
    expect(links.every((url) => url?.startsWith(`${PUBLIC_URL}/#/p/chat/`))).toBe(true);
    expect(links).toContain(`${PUBLIC_URL}/#/p/chat/versions?kind=production`);

    // Slack and Teams answered 200 to every one: all delivered.
    for (const format of ['slack', 'teams']) {
      const log = await eventually(
        async () =>
          (
            await backend.api<WebhookDeliveryResponse[]>(
              'GET',
              `/projects/chat/webhooks/${hooks[format]}/deliveries?limit=100`,
            )
          ).body,
        (deliveries) =>
          deliveries.length === forChats() && deliveries.every((delivery) => delivery.status !== 'pending'),
      );
      expect(log.length).toBeGreaterThanOrEqual(count);
      expect(log.map((delivery) => [delivery.status, delivery.lastStatus])).toEqual(
        Array.from({ length: log.length }, () => ['delivered', 200]),
      );
    }
  });
});
