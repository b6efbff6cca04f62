import { scopeAllows } from './scopes';

describe('scopeAllows', () => {
  it.each([
    ['admin', 'read', true],
    ['admin', 'write', true],
    ['write', 'read', true],
    ['read', 'write', false],
    ['write', 'admin', false],
    ['agent', 'read', false],
    ['admin', 'agent', false],
    ['agent', 'agent', true],
  ] as const)('%s covers %s: %s', (held, needed, allowed) => {
    expect(scopeAllows(held, needed)).toBe(allowed);
  });
});
