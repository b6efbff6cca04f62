import { acceptedVersion, newestFirst } from './versions';

describe('acceptedVersion', () => {
  it('previews the next minor for non-breaking changes and the next major for breaking ones', () => {
    expect(acceptedVersion('1.0', [{ breaking: false }])).toBe('1.1');
    expect(acceptedVersion('1.4', [{ breaking: false }, { breaking: true }])).toBe('2.0');
  });

  it('gives null for a version it cannot read', () => {
    expect(acceptedVersion('v-one', [])).toBeNull();
  });
});

describe('newestFirst', () => {
  it('orders by version number, not text, with unreadable versions last', () => {
    const order = newestFirst([{ version: '1.9' }, { version: 'draft' }, { version: '2.0' }, { version: '1.10' }]).map(
      (v) => v.version,
    );
    expect(order).toEqual(['2.0', '1.10', '1.9', 'draft']);
  });
});
