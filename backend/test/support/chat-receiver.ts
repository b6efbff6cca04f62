import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './evidence-helpers';

/**
 * Block Kit's documented limits (https://docs.slack.dev/reference/block-kit/blocks), checked by the
 * test receiver on every Slack body. Written here from the documentation, not imported from the
 * code under test, so a wrong limit there is caught.
 */
const BLOCK_TYPES = new Set(['header', 'section', 'divider', 'context', 'actions', 'image', 'rich_text']);

/** What is wrong with a Slack incoming-webhook body by Block Kit's rules; empty when nothing is. */
export function slackProblems(body: unknown): string[] {
  const problems: string[] = [];
  const check = (ok: boolean, problem: string): void => {
    if (!ok) problems.push(problem);
  };
  if (typeof body !== 'object' || body === null) return ['body is not an object'];
  const message = body as { text?: unknown; blocks?: unknown };
  check(typeof message.text === 'string' && message.text.length > 0, 'text (the notification) is missing');
  check(typeof message.text !== 'string' || message.text.length <= 40_000, 'text is longer than 40,000 characters');
  for (const key of Object.keys(message)) check(['text', 'blocks'].includes(key), `unexpected top-level key ${key}`);
  if (!Array.isArray(message.blocks)) return [...problems, 'blocks is not an array'];
  check(message.blocks.length >= 1 && message.blocks.length <= 50, `${message.blocks.length} blocks (1 to 50)`);
  const textObject = (value: unknown, where: string, max: number, types: string[]): void => {
    const text = value as { type?: unknown; text?: unknown } | undefined;
    if (typeof text !== 'object' || text === null) return void problems.push(`${where} is not a text object`);
    check(types.includes(String(text.type)), `${where}.type ${String(text.type)} is not ${types.join(' or ')}`);
    check(typeof text.text === 'string' && text.text.length >= 1, `${where}.text is empty`);
    check(typeof text.text !== 'string' || text.text.length <= max, `${where}.text is longer than ${max}`);
    // In mrkdwn, &, < and > are control characters: only the escaped forms may appear.
    if (text.type === 'mrkdwn' && typeof text.text === 'string')
      check(!/[<>]|&(?!amp;|lt;|gt;)/.test(text.text), `${where}.text has an unescaped &, < or >`);
  };
  message.blocks.forEach((raw, i) => {
    const block = raw as Record<string, unknown>;
    const where = `blocks[${i}]`;
    check(BLOCK_TYPES.has(String(block.type)), `${where}.type ${String(block.type)} is not a Block Kit block`);
    if (typeof block.block_id === 'string') check(block.block_id.length <= 255, `${where}.block_id too long`);
    switch (block.type) {
      case 'header':
        textObject(block.text, `${where}.text`, 150, ['plain_text']);
        break;
      case 'section': {
        check(block.text !== undefined || block.fields !== undefined, `${where} has neither text nor fields`);
        if (block.text !== undefined) textObject(block.text, `${where}.text`, 3000, ['plain_text', 'mrkdwn']);
        if (block.fields !== undefined) {
          const fields = block.fields as unknown[];
          check(Array.isArray(fields) && fields.length <= 10, `${where}.fields has more than 10 items`);
          fields.forEach((field, j) => textObject(field, `${where}.fields[${j}]`, 2000, ['plain_text', 'mrkdwn']));
        }
        break;
      }
      case 'context': {
        const elements = block.elements as unknown[];
        check(Array.isArray(elements) && elements.length >= 1 && elements.length <= 10, `${where}.elements 1 to 10`);
        break;
      }
      case 'actions': {
        const elements = block.elements as Array<Record<string, unknown>>;
        check(Array.isArray(elements) && elements.length >= 1 && elements.length <= 25, `${where}.elements 1 to 25`);
        elements.forEach((element, j) => {
          const at = `${where}.elements[${j}]`;
          check(element.type === 'button', `${at} is not a button`);
          textObject(element.text, `${at}.text`, 75, ['plain_text']);
          check(typeof element.url === 'string' && element.url.length <= 3000, `${at}.url missing or too long`);
          check(typeof element.action_id !== 'string' || element.action_id.length <= 255, `${at}.action_id too long`);
        });
        break;
      }
    }
  });
  return problems;
}

export interface ChatReceiver {
  url: string;
  /** Bodies received per path (`/slack`, `/teams`, …), parsed. */
  received: Map<string, unknown[]>;
  /** Problems found, by path, with the body's index. */
  problems: string[];
  close(): Promise<void>;
}

/**
 * A local receiver on port 0 that checks each body against its format by the path it was sent
 * to: `/slack` by Block Kit's rules, `/teams` by `teamsProblems`; it answers 400 with the
 * problems (as Slack and Teams do) and keeps them, and 200 `ok` otherwise.
 */
export async function startChatReceiver(teamsProblems: (body: unknown) => string[]): Promise<ChatReceiver> {
  const received = new Map<string, unknown[]>();
  const problems: string[] = [];
  const server = createServer((request, response) => {
    void readBody(request).then((text) => {
      const path = request.url ?? '/';
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        problems.push(`${path}: not JSON`);
        return void response.writeHead(400).end('invalid_payload');
      }
      const list = received.get(path) ?? [];
      list.push(body);
      received.set(path, list);
      const found = path === '/slack' ? slackProblems(body) : path === '/teams' ? teamsProblems(body) : [];
      for (const problem of found) problems.push(`${path} #${list.length - 1}: ${problem}`);
      if (found.length > 0) return void response.writeHead(400).end(found.join('\n'));
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    problems,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The Adaptive Cards library of the format's authors (npm `adaptivecards`; its bundle, which loads
 * in Node without a DOM). No JSON schema of Adaptive Cards is published on npm, so a card is
 * checked by parsing it as a Teams client would: unknown element and action types, invalid values
 * and unsupported versions are parse or validation events, and a property the library does not
 * know is dropped when it writes the card back, so the card must come back unchanged.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const AdaptiveCards = require('adaptivecards/dist/adaptivecards.js') as typeof import('adaptivecards');

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]),
  );
}

/** What is wrong with a Teams webhook body (a message with one Adaptive Card); empty when nothing is. */
export function teamsProblems(body: unknown): string[] {
  const message = body as { type?: unknown; attachments?: Array<{ contentType?: unknown; content?: unknown }> };
  if (message.type !== 'message') return ['type is not message'];
  if (!Array.isArray(message.attachments) || message.attachments.length !== 1) return ['not one attachment'];
  const [attachment] = message.attachments;
  if (attachment?.contentType !== 'application/vnd.microsoft.card.adaptive')
    return [`attachment contentType ${String(attachment?.contentType)}`];
  const content = attachment.content as Record<string, unknown>;
  const problems: string[] = [];
  if (content.type !== 'AdaptiveCard') problems.push('content.type is not AdaptiveCard');
  if (typeof content.version !== 'string') problems.push('content.version is missing');
  const card = new AdaptiveCards.AdaptiveCard();
  const context = new AdaptiveCards.SerializationContext();
  card.parse(content, context);
  for (let i = 0; i < context.eventCount; i++) problems.push(`parse: ${context.getEventAt(i).message}`);
  for (const event of card.validateProperties().validationEvents) problems.push(`validation: ${event.message}`);
  const written = JSON.stringify(sortedKeys(card.toJSON()));
  const sent = JSON.stringify(sortedKeys(content));
  if (written !== sent) problems.push(`the library writes the card back otherwise: ${written} for ${sent}`);
  return problems;
}
