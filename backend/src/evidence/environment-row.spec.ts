import { environmentRowOf } from './environment-row';

describe('environmentRowOf', () => {
  it.each([
    [
      'a CI run by pull request',
      { kind: 'ci', pullRequest: '42', commit: 'abc', build: '7' },
      { kind: 'ci', name: 'PR #42', scope: '42', pullRequest: '42', build: '7', commit: 'abc' },
    ],
    [
      'a CI run without a pull request by build',
      { kind: 'ci', build: '7' },
      { kind: 'ci', name: '7', scope: '', pullRequest: null, build: '7', commit: null },
    ],
    [
      'a staging build',
      { kind: 'staging', build: 's-1', commit: 'abc' },
      { kind: 'staging', name: 's-1', scope: '', pullRequest: null, build: 's-1', commit: 'abc' },
    ],
    [
      'a production build without a build name by commit',
      { kind: 'production', commit: 'abc' },
      { kind: 'production', name: 'abc', scope: '', pullRequest: null, build: null, commit: 'abc' },
    ],
  ] as const)('names %s', (_name, environment, expected) => {
    expect(environmentRowOf(environment)).toEqual(expected);
  });

  it('makes no row for local captures', () => {
    expect(environmentRowOf({ kind: 'local', build: 'x' })).toBeNull();
  });
});
