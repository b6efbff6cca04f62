import { acceptedVersion } from './versions';

describe('acceptedVersion', () => {
  it('previews the next minor for non-breaking changes and the next major for breaking ones', () => {
    expect(acceptedVersion('1.0', [{ breaking: false }])).toBe('1.1');
    expect(acceptedVersion('1.4', [{ breaking: false }, { breaking: true }])).toBe('2.0');
  });

  it('gives null for a version it cannot read', () => {
    expect(acceptedVersion('v-one', [])).toBeNull();
  });
});
