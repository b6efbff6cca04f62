import { eventsProtocols, eventsUrl, parseDashboardEvent, reconnectDelay } from './events';

describe('parseDashboardEvent', () => {
  it('reads a capture.started event', () => {
    const event = {
      type: 'capture.started',
      captureId: 'c2',
      environment: { kind: 'local', name: 'local' },
      startedAt: '2026-01-01T00:00:00Z',
    };
    expect(parseDashboardEvent(JSON.stringify(event))).toEqual(event);
  });

  it('unwraps the {event, data} envelope', () => {
    expect(
      parseDashboardEvent(JSON.stringify({ event: 'dashboard', data: { type: 'capture.updated', captureId: 'c1' } })),
    ).toEqual({ type: 'capture.updated', captureId: 'c1' });
  });

  it.each([
    'not json',
    '42',
    'null',
    '{"type":"unknown.kind"}',
    '{"type":"capture.started"}',
    '{"type":"version.changed","environment":{"kind":"moon"}}',
  ])('ignores %s', (frame) => {
    expect(parseDashboardEvent(frame)).toBeNull();
  });
});

describe('eventsUrl', () => {
  it('uses wss on https and never carries the token (it rides as a sub-protocol)', () => {
    expect(eventsUrl({ protocol: 'https:', host: 'spectator.example:8443' }, '/api/v1/projects/demo/events')).toBe(
      'wss://spectator.example:8443/api/v1/projects/demo/events',
    );
    expect(eventsUrl({ protocol: 'http:', host: '127.0.0.1:3000' }, '/e')).toBe('ws://127.0.0.1:3000/e');
    expect(eventsProtocols('spk_abc-_1')).toEqual(['spectator.v1', 'bearer.spk_abc-_1']);
  });
});

describe('reconnectDelay', () => {
  it('grows exponentially with jitter and stays under 15 s', () => {
    expect(reconnectDelay(0, () => 0)).toBe(250);
    expect(reconnectDelay(0, () => 1)).toBe(500);
    expect(reconnectDelay(3, () => 1)).toBe(4000);
    expect(reconnectDelay(30, () => 1)).toBe(15_000);
  });
});
