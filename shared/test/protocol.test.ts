import { ENVIRONMENT_KINDS, PROTOCOL_VERSION, ROUTES } from '@spectator/shared';

describe('wire protocol constants', () => {
  it('names the four environment kinds of the spec', () => {
    expect([...ENVIRONMENT_KINDS]).toEqual(['local', 'ci', 'staging', 'production']);
  });
  it('has a positive protocol version', () => {
    expect(PROTOCOL_VERSION).toBeGreaterThanOrEqual(1);
  });
  it('encodes project slugs in event routes', () => {
    expect(ROUTES.projectEvents('a b')).toBe('/api/v1/projects/a%20b/events');
  });
});
