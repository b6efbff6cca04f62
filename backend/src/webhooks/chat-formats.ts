import type { KnownBlock } from '@slack/types';
import type { WebhookFormat } from '@spectator/shared';
import type { TransitionEvent, WebhookBody } from './transition-events';

/**
 * Chat formats of webhook deliveries (docs/webhooks.md, "Chat formats"): the same transition
 * event as a Slack message (Block Kit, for an incoming webhook) or a Microsoft Teams message (an
 * Adaptive Card, for a Workflows or incoming webhook). Each is a headline, one sentence, a few
 * facts and a link to the dashboard when the backend knows its public address.
 */

/** Block Kit's documented limits that these messages could reach (https://docs.slack.dev/reference/block-kit/blocks). */
export const SLACK_LIMITS = {
  blocks: 50,
  headerText: 150,
  sectionText: 3000,
  fields: 10,
  fieldText: 2000,
  contextElements: 10,
  buttonText: 75,
  url: 3000,
} as const;

/** The Adaptive Card schema version the Teams messages use (Teams renders 1.4 in every client). */
export const ADAPTIVE_CARD_VERSION = '1.4';

/** What a chat message says, before it is written in one format. */
export interface ChatMessage {
  /** One line: what happened (plain text). */
  headline: string;
  /** One sentence; `code` spans are marked with backquotes (both formats render them). */
  summary: string;
  /** Label → value, in order; values are plain text. */
  facts: Array<[string, string]>;
  /** The dashboard screen it is about, or null when the backend does not know its public address. */
  link: { title: string; url: string } | null;
  /** A tone for the headline: breaking changes, drift and undocumented production traffic need attention. */
  attention: boolean;
}

/** Where the dashboard lives (`SPECTATOR_PUBLIC_URL`), to link messages to it; null: no links. */
export type DashboardBase = string | null;

function hash(base: DashboardBase, project: string, route: string): string | null {
  if (base === null) return null;
  return `${base.replace(/\/+$/, '')}/#/p/${encodeURIComponent(project)}/${route}`;
}

function environmentLabel(environment: { kind: string; name: string }): string {
  return environment.kind === 'ci' ? `CI (${environment.name})` : environment.kind;
}

/** What a transition event says in a chat. */
export function chatMessage(body: WebhookBody, base: DashboardBase): ChatMessage {
  const event: TransitionEvent = body.data;
  const facts: Array<[string, string]> = [['Project', body.project]];
  const add = (label: string, value: string | null): void => {
    if (value !== null && value !== '') facts.push([label, value]);
  };
  switch (event.type) {
    case 'proposal.step': {
      add('Step', event.step);
      add('Status', event.status);
      add('Approved by', event.actor);
      add('Pull request', event.pullRequest);
      add('Build', event.build);
      add('Commit', event.commit);
      add('At', event.at);
      const url = hash(base, body.project, `proposals/${encodeURIComponent(event.proposalId)}`);
      return {
        headline: `Proposal ${event.step === 'Approved' ? 'approved' : `step: ${event.step}`}`,
        summary: `“${event.title}” reached ${event.step}.`,
        facts,
        link: url === null ? null : { title: 'Open the proposal', url },
        attention: false,
      };
    }
    case 'version.changed': {
      const where = environmentLabel(event.environment);
      const endpoint = `\`${event.method} ${event.path}\``;
      add('Environment', where);
      add('Version', event.version);
      add('Previous', event.previous ?? 'not seen there before');
      add('Pull request', event.pullRequest);
      add('Build', event.build);
      add('Commit', event.commit);
      const url = hash(base, body.project, `versions?kind=${event.environment.kind}`);
      const link = url === null ? null : { title: 'Open the versions table', url };
      if (event.drift)
        return {
          headline: `Drift in ${where}: ${event.method} ${event.path}`,
          summary: `Traffic of ${endpoint} in ${where} conforms to no documented version; the nearest is ${event.version}.`,
          facts,
          link,
          attention: true,
        };
      if (event.breaking)
        return {
          headline: `Breaking change in ${where}: ${event.method} ${event.path}`,
          summary: `${endpoint} now runs ${event.version} in ${where} (was ${event.previous ?? ''}): a new major version, breaking for its clients.`,
          facts,
          link,
          attention: true,
        };
      return {
        headline: `${event.method} ${event.path} ${event.version} in ${where}`,
        summary:
          event.previous === null
            ? `${endpoint} was seen in ${where} for the first time, at ${event.version}.`
            : `${endpoint} now runs ${event.version} in ${where} (was ${event.previous}).`,
        facts,
        link,
        attention: false,
      };
    }
    case 'drift.appeared': {
      const where = environmentLabel(event.environment);
      add('Environment', where);
      add('Nearest version', event.version);
      add('Began', event.since.replace(/^since /, ''));
      add('Pull request', event.pullRequest);
      add('Build', event.build);
      add('Commit', event.commit);
      const url = hash(base, body.project, `versions?kind=${event.environment.kind}`);
      return {
        headline: `Drift began in ${where}: ${event.method} ${event.path}`,
        summary: `Traffic of \`${event.method} ${event.path}\` in ${where} conforms to no documented version (the nearest is ${event.version})${event.since === '' ? '' : `, ${event.since}`}.`,
        facts,
        link: url === null ? null : { title: 'Open the versions table', url },
        attention: true,
      };
    }
    case 'endpoints.undocumented': {
      const where = environmentLabel(event.environment);
      const named = event.endpoints.map((e) => `\`${e.method} ${e.path}\``);
      const more = event.total - event.endpoints.length;
      add('Environment', where);
      add('Build', event.build);
      add('Commit', event.commit);
      const url = hash(base, body.project, 'captures');
      const first = event.endpoints[0];
      return {
        headline:
          event.total === 1 && first !== undefined
            ? `Undocumented endpoint in ${where}: ${first.method} ${first.path}`
            : `${event.total} undocumented endpoints in ${where}`,
        summary: `${named.join(', ')}${more > 0 ? ` and ${more} more` : ''} answered traffic in ${where} for the first time and ${event.total === 1 ? 'is' : 'are'} not documented.`,
        facts,
        link: url === null ? null : { title: 'Review them', url },
        attention: true,
      };
    }
  }
}

/** Cuts `text` to `max` characters (UTF-16 units, as Slack counts), with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * Slack mrkdwn of plain text, at most `max` characters: `&`, `<` and `>` are control characters and
 * are escaped; a cut never leaves half an entity (`&am`) behind.
 */
function mrkdwn(text: string, max: number): string {
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  if (escaped.length <= max) return escaped;
  return `${escaped.slice(0, max - 1).replace(/&[a-z]*$/, '')}…`;
}

/** A Slack incoming-webhook body: `text` (notifications, and clients without blocks) and Block Kit blocks. */
export function slackMessage(message: ChatMessage): { text: string; blocks: KnownBlock[] } {
  const blocks: KnownBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: clip(message.headline, SLACK_LIMITS.headerText) } },
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `${message.attention ? ':warning: ' : ''}${mrkdwn(message.summary, SLACK_LIMITS.sectionText - 10)}`,
      },
    },
  ];
  if (message.facts.length > 0)
    blocks.push({
      type: 'section',
      fields: message.facts.slice(0, SLACK_LIMITS.fields).map(([label, value]) => ({
        type: 'mrkdwn',
        text: `*${mrkdwn(label, 100)}*\n${mrkdwn(value, SLACK_LIMITS.fieldText - 110)}`,
      })),
    });
  if (message.link !== null && message.link.url.length <= SLACK_LIMITS.url)
    blocks.push({
      type: 'actions',
      elements: [
        {
          type: 'button',
          text: { type: 'plain_text', text: clip(message.link.title, SLACK_LIMITS.buttonText) },
          url: message.link.url,
          action_id: 'open',
        },
      ],
    });
  return { text: `${message.headline}: ${message.summary}`, blocks: blocks.slice(0, SLACK_LIMITS.blocks) };
}

/** A Teams webhook body: a message with one Adaptive Card attachment. */
export function teamsMessage(message: ChatMessage): Record<string, unknown> {
  const card: Record<string, unknown> = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: ADAPTIVE_CARD_VERSION,
    body: [
      {
        type: 'TextBlock',
        text: message.headline,
        weight: 'Bolder',
        size: 'Medium',
        wrap: true,
        ...(message.attention ? { color: 'Attention' } : {}),
      },
      { type: 'TextBlock', text: message.summary, wrap: true },
      { type: 'FactSet', facts: message.facts.map(([title, value]) => ({ title, value })) },
    ],
  };
  if (message.link !== null)
    card.actions = [{ type: 'Action.OpenUrl', title: message.link.title, url: message.link.url }];
  return {
    type: 'message',
    attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: card }],
  };
}

/**
 * Whether a chat leaves an event out because another message says it: a drifting
 * `version.changed` comes with `drift.appeared` for the same cell, which also says where the drift
 * began, so a chat gets that one message, not two (JSON webhooks get both events).
 */
export function chatLeavesOut(event: TransitionEvent): boolean {
  return event.type === 'version.changed' && event.drift;
}

/**
 * The body a webhook of `format` is sent for an event (the exact bytes that are signed), or null
 * when that format sends nothing for it (`chatLeavesOut`).
 */
export function formatBody(format: WebhookFormat, body: WebhookBody, base: DashboardBase): string | null {
  if (format !== 'json' && chatLeavesOut(body.data)) return null;
  switch (format) {
    case 'json':
      return JSON.stringify(body);
    case 'slack':
      return JSON.stringify(slackMessage(chatMessage(body, base)));
    case 'teams':
      return JSON.stringify(teamsMessage(chatMessage(body, base)));
  }
}
