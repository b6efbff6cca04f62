import { chatMessage, formatBody, SLACK_LIMITS, slackMessage } from './chat-formats';
import type { WebhookBody } from './transition-events';

const step = (title: string): WebhookBody => ({
  id: 'e1',
  type: 'proposal.step',
  project: 'p',
  occurredAt: '2026-11-28T10:00:00.000Z',
  data: {
    type: 'proposal.step',
    proposalId: 'p1',
    title,
    step: 'Approved',
    status: 'Approved',
    at: '2026-11-28T10:00:00.000Z',
    actor: 'x'.repeat(5_000),
    pullRequest: null,
    build: null,
    commit: null,
  },
});

describe('chat formats', () => {
  it('keeps a Slack message within Block Kit limits whatever the title', () => {
    const message = slackMessage(chatMessage(step('<&>'.repeat(3_000)), 'https://s.example'));
    const [header, section, fields] = message.blocks as Array<{
      text?: { text: string };
      fields?: Array<{ text: string }>;
    }>;
    expect(header?.text?.text.length).toBeLessThanOrEqual(SLACK_LIMITS.headerText);
    expect(section?.text?.text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionText);
    // Cut after escaping, never inside an entity: no raw control character remains.
    expect(section?.text?.text).not.toMatch(/[<>]|&(?!amp;|lt;|gt;)/);
    expect(fields?.fields?.length).toBeGreaterThan(0);
    for (const field of fields?.fields ?? []) {
      expect(field.text.length).toBeLessThanOrEqual(SLACK_LIMITS.fieldText);
      expect(field.text).not.toMatch(/[<>]|&(?!amp;|lt;|gt;)/);
    }
  });

  it('links only when the public address is known', () => {
    expect(chatMessage(step('t'), null).link).toBeNull();
    expect(chatMessage(step('t'), 'https://s.example/').link?.url).toBe('https://s.example/#/p/p/proposals/p1');
  });

  it('sends the JSON format as the event itself', () => {
    expect(JSON.parse(formatBody('json', step('t'), null) as string)).toEqual(step('t'));
  });

  it('leaves a drifting version.changed out of chats, which get drift.appeared instead', () => {
    const changed = (drift: boolean): WebhookBody => ({
      id: 'e2',
      type: 'version.changed',
      project: 'p',
      occurredAt: '2026-11-28T10:00:00.000Z',
      data: {
        type: 'version.changed',
        endpointId: 'x',
        method: 'GET',
        path: '/users',
        environment: { kind: 'production', name: 'p-3' },
        pullRequest: null,
        build: 'p-3',
        commit: null,
        previous: '1.0',
        version: '2.0',
        drift,
        breaking: false,
      },
    });
    expect(formatBody('slack', changed(true), null)).toBeNull();
    expect(formatBody('teams', changed(true), null)).toBeNull();
    expect(JSON.parse(formatBody('json', changed(true), null) as string)).toEqual(changed(true));
    expect(formatBody('slack', changed(false), null)).toContain('GET /users 2.0 in production');
  });
});
