import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { startTestAgent } from './support/agent';
import { FakeBackend } from './support/fake-backend';
import { sendJson, startUpstream } from './support/upstream';
import { waitFor } from './support/wait';

/**
 * Canary values planted everywhere a value can hide in traffic. None may appear in anything the
 * agent sends over the WebSocket or writes to its log. Names (field, query, header) are allowed
 * by design; values are not.
 */
const CANARY = {
  requestBody: 'canary-request-body-6b1f',
  requestNumber: 918273645,
  responseBody: 'canary-response-body-2c9d',
  nestedResponse: 'canary-nested-value-5e7a',
  gzipBody: 'canary-gzip-body-8d2c',
  formValue: 'canary-form-value-1a4b',
  multipartValue: 'canary-multipart-value-2e8f',
  fileName: 'canary-file-name-7b3a.pdf',
  fileContent: 'canary-file-content-4c1d',
  queryValue: 'canary-query-value-3f8e',
  headerValue: 'canary-header-value-7c3d',
  authorization: 'canary-bearer-token-9e2f',
  cookie: 'canary-cookie-value-4d6a',
  setCookie: 'canary-set-cookie-0b5c',
  responseHeader: 'canary-response-header-6f1e',
  // RFC 9745 and RFC 8594 values: that an endpoint is deprecated may be told, never when.
  deprecation: '@1766012345',
  sunset: 'Thu, 01 Jan 2099 07:13:31 GMT',
  // A Sunset date already past: the agent tells that it passed (a count), never the date.
  pastSunset: 'Sat, 17 Mar 2001 04:26:51 GMT',
  pathNumber: '734628195',
  pathUuid: '5f0c2a7e-9b1d-4c3e-8a6f-2d7b9e1c4a80',
  pathHex: 'a3f9c1e07b5d2f4e8c6a',
  pathToken: 'usr8Kq2Zx91Lm',
  pathEmail: 'canary.person@example.org',
  agentToken: 'canary-agent-token-5a9b',
  eventData: 'canary-event-data-8e3b',
  eventText: 'canary-event-text-0d7c',
  eventName: 'canary-event-name-3a6f',
  eventId: 'canary-event-id-9c2e',
  jsonLine: 'canary-json-line-5b1a',
};

describe('privacy', () => {
  it('sends and logs no planted value: bodies, streamed events and lines, query strings, headers, cookies, identifier-like path segments, the token', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-privacy-'));
    const configPath = path.join(dir, 'service.yml');
    // A bad entry gets logged: the log line must name the entry, and the entry is config, not traffic.
    fs.writeFileSync(configPath, 'ignoreRequests:\n  - GET /ignored\n  - BREW /coffee\n');
    const upstream = await startUpstream((req, res, body) => {
      if (req.url?.startsWith('/gzip')) {
        const zipped = zlib.gzipSync(JSON.stringify({ secret: CANARY.gzipBody }));
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'content-length': zipped.length,
        });
        return void res.end(zipped);
      }
      if (req.url?.startsWith('/reset')) return void req.socket.destroy();
      if (req.url?.startsWith('/events')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.end(
          `event: ${CANARY.eventName}\nid: ${CANARY.eventId}\ndata: {"delta":"${CANARY.eventData}"}\n\ndata: ${CANARY.eventText}\n\n`,
        );
      }
      if (req.url?.startsWith('/retired')) return void sendJson(res, 200, { id: 1 }, { sunset: CANARY.pastSunset });
      if (req.url?.startsWith('/lines')) {
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        return void res.end(`{"value":"${CANARY.jsonLine}"}\n`);
      }
      sendJson(
        res,
        200,
        { echo: body.length, secret: CANARY.responseBody, nested: { list: [{ value: CANARY.nestedResponse }] } },
        {
          'set-cookie': `session=${CANARY.setCookie}; HttpOnly`,
          'x-upstream-secret': CANARY.responseHeader,
          deprecation: CANARY.deprecation,
          sunset: CANARY.sunset,
        },
      );
    });
    const backend = await FakeBackend.start({ token: CANARY.agentToken });
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: CANARY.agentToken,
      configPath,
    });
    const headers = {
      'content-type': 'application/json',
      'x-client-secret': CANARY.headerValue,
      authorization: `Bearer ${CANARY.authorization}`,
      cookie: `session=${CANARY.cookie}; theme=dark`,
    };
    const paths = [
      `/users/${CANARY.pathNumber}/orders?token=${CANARY.queryValue}&page=2`,
      `/users/${CANARY.pathUuid}`,
      `/files/${CANARY.pathHex}`,
      `/accounts/${CANARY.pathToken}/settings`,
      `/people/${CANARY.pathEmail}`,
      `/ignored?x=${CANARY.queryValue}`,
    ];
    try {
      for (const p of paths) {
        await fetch(`${agent.proxyUrl}${p}`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ secret: CANARY.requestBody, count: CANARY.requestNumber }),
        }).then((r) => r.text());
      }
      await fetch(`${agent.proxyUrl}/login`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        body: `user=${CANARY.formValue}&password=${CANARY.formValue}`,
      }).then((r) => r.text());
      const form = new FormData();
      form.append('note', CANARY.multipartValue);
      form.append('doc', new Blob([CANARY.fileContent], { type: 'application/pdf' }), CANARY.fileName);
      await fetch(`${agent.proxyUrl}/upload`, { method: 'POST', headers: { cookie: headers.cookie }, body: form }).then(
        (r) => r.text(),
      );
      await fetch(`${agent.proxyUrl}/gzip/${CANARY.pathNumber}`, { headers }).then((r) => r.text());
      await fetch(`${agent.proxyUrl}/reset/${CANARY.pathHex}?q=${CANARY.queryValue}`, { headers }).then((r) =>
        r.text(),
      );
      await fetch(`${agent.proxyUrl}/events`, { headers }).then((r) => r.text());
      await fetch(`${agent.proxyUrl}/lines`, { headers }).then((r) => r.text());
      await fetch(`${agent.proxyUrl}/retired`, { headers }).then((r) => r.text());
      await waitFor('observations', () => backend.count() >= 12);
    } finally {
      await agent.close();
      await upstream.close();
      await backend.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }

    const sent = backend.frames.join('\n');
    const logged = agent.logs.text;
    // The test is only worth something if the traffic was really seen and logged.
    expect(backend.count()).toBeGreaterThanOrEqual(12);
    expect(sent).toContain('"sunsetPast":1'); // that the Sunset date had passed travels, the date does not
    expect(sent).toContain('"secret"'); // field names do travel
    expect(sent).toContain('"doc"'); // a multipart part's name too
    expect(sent).toContain('multipart/form-data');
    expect(sent).toContain('"delta"'); // an event's data is shaped: its field names travel
    expect(sent).toContain('"value"'); // a JSON line's too
    expect(sent).toContain('/users/{userId}/orders');
    expect(logged).toContain('BREW /coffee');
    expect(logged).toContain('upstream request failed');
    for (const [where, value] of Object.entries(CANARY)) {
      expect({ where, inFrames: sent.includes(String(value)) }).toEqual({ where, inFrames: false });
      expect({ where, inLogs: logged.includes(String(value)) }).toEqual({ where, inLogs: false });
    }
  });
});
