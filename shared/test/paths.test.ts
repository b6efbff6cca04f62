import fc from 'fast-check';
import { CardinalityLimiter, matchTemplate, queryNames, sameRoute, templatePath } from '../src/paths/template';
import { identifierStrength, singular } from '../src/paths/segments';
import { stepsOf, superLinear } from './steps';

describe('templatePath', () => {
  it.each([
    // DESIGN.md, Paths
    ['/posts/17', '/posts/{postId}'],
    ['/posts', '/posts'],
    ['/', '/'],
    ['', '/'],
    ['/categories/5', '/categories/{categoryId}'],
    ['/people/3', '/people/{personId}'],
    ['/addresses/3', '/addresses/{addressId}'],
    ['/statuses/3', '/statuses/{statusId}'],
    ['/boxes/3', '/boxes/{boxId}'],
    ['/user/3', '/user/{userId}'],
    ['/blog-posts/9', '/blog-posts/{blogPostId}'],
    ['/user_accounts/9', '/user_accounts/{userAccountId}'],
    ['/a-s/jane@example.com', '/a-s/{aSId}'], // regression: a one-letter plural crashed naming
    ['/users/42/posts/17', '/users/{userId}/posts/{postId}'],
    ['/users/42/posts/17/comments', '/users/{userId}/posts/{postId}/comments'],
    // identifier kinds
    ['/orders/550e8400-e29b-41d4-a716-446655440000', '/orders/{orderId}'],
    ['/commits/9fceb02d0ae598e95dc970b74767f19372d61af8', '/commits/{commitId}'],
    ['/objects/a1b2c3d4', '/objects/{objectId}'],
    ['/users/jane.doe@example.com', '/users/{userId}'],
    ['/users/jane.doe%40example.com', '/users/{userId}'],
    ['/reports/2024-01-31', '/reports/{reportId}'],
    ['/events/2024-01-31T10:00:00Z', '/events/{eventId}'],
    ['/items/01ARZ3NDEKTSV4RRFFQ69G5FAV', '/items/{itemId}'],
    ['/sessions/dGhpcyBpcyBhIHNlY3JldCB0b2tlbg2', '/sessions/{sessionId}'],
    ['/tokens/eyJhbGciOiJIUzI1NiJ9', '/tokens/{tokenId}'],
    ['/prices/-3', '/prices/{priceId}'],
    // no usable parent name → {id}; names unique within a template
    ['/posts/17/42', '/posts/{postId}/{id}'],
    ['/posts/17/42/7', '/posts/{postId}/{id}/{id2}'],
    ['/files/a1b2c3d4/550e8400-e29b-41d4-a716-446655440000', '/files/{fileId}/{id}'],
    ['/v2/alice', '/v2/alice'], // right after a version segment: a name
    ['/v2/42', '/v2/{id}'], // a number right after a version is no second version: a value
    ['/send/v1/110085/digital-account', '/send/v1/{id}/digital-account'],
    ['/v1/2024-06-01/reports', '/v1/2024-06-01/reports'], // a dated version stays
    ['/api/2/users', '/api/2/users'], // after api a number may be the version itself
    // names, not identifiers
    ['/users/me', '/users/me'],
    ['/auth/oauth2/callback', '/auth/oauth2/callback'],
    ['/hash/sha256', '/hash/sha256'],
    ['/encode/base64', '/encode/base64'],
    ['/tests/e2e', '/tests/e2e'],
    ['/posts/getUserProfileSettingsNow', '/posts/getUserProfileSettingsNow'],
    ['/docs/very-long-slug-of-a-blog-post', '/docs/very-long-slug-of-a-blog-post'],
    // the first segment, after `api`, `v1`-style and date segments: never (weak) parameters
    ['/17', '/17'],
    ['/2024-01-31/reports', '/2024-01-31/reports'],
    ['/api/2/users/5', '/api/2/users/{userId}'],
    ['/API/2/users', '/API/2/users'],
    ['/v1/posts/17', '/v1/posts/{postId}'],
    ['/api/v1.2/posts/17', '/api/v1.2/posts/{postId}'],
    ['/api/2024-01-31/charges/17', '/api/2024-01-31/charges/{chargeId}'],
    ['/archive/2024-01-31/17', '/archive/{archiveId}/{id}'], // a date that is a parameter introduces nothing
    // ...but an unmistakable identifier never leaves the agent, wherever it is
    ['/550e8400-e29b-41d4-a716-446655440000', '/{id}'],
    ['/api/550e8400-e29b-41d4-a716-446655440000', '/api/{id}'],
    ['/v1/jane@example.com/posts', '/v1/{id}/posts'],
    // trailing slash, empty segments, query, fragment, absolute form, percent-encoding
    ['/posts/', '/posts'],
    ['/posts/17/', '/posts/{postId}'],
    ['//posts//17', '/posts/{postId}'],
    ['/posts/17?draft=true&x=1', '/posts/{postId}'],
    ['/posts#top', '/posts'],
    ['posts/17', '/posts/{postId}'],
    ['http://example.com:8080/posts/17?q=1', '/posts/{postId}'],
    ['/files/hello%20world', '/files/hello%20world'],
    ['/files/%7Euser', '/files/~user'],
    ['/files/a%2Fb', '/files/a%2Fb'], // an encoded slash stays inside its segment
    ['/files/%zz', '/files/%25zz'], // malformed escapes are text
    ['/files/%7Bid%7D', '/files/%7Bid%7D'], // an encoded brace is a literal, not a parameter
    ['/caf%C3%A9/menu', '/caf%C3%A9/menu'],
    ['/projects/x:batchGet', '/projects/x:batchGet'],
    // templates give themselves
    ['/posts/{postId}', '/posts/{postId}'],
    ['/posts/{id}/comments/5', '/posts/{id}/comments/{commentId}'],
    ['/a/{id}/b/550e8400-e29b-41d4-a716-446655440000/{x}', '/a/{id}/b/{bId}/{x}'],
  ])('%s → %s', (raw, template) => {
    expect(templatePath(raw)).toBe(template);
  });

  it.each([
    // a literal beats a parameter when both are known
    ['/users/me', ['/users/{userId}', '/users/me'], '/users/me'],
    ['/users/me', ['/users/me', '/users/{userId}'], '/users/me'],
    ['/users/17', ['/users/{userId}', '/users/me'], '/users/{userId}'],
    // a known template wins over what the detectors would make of a segment
    ['/users/alice', ['/users/{userId}'], '/users/{userId}'],
    ['/users/alice/posts', ['/users/{id}/posts'], '/users/{id}/posts'],
    ['/products/sku-77', ['/products/{sku}'], '/products/{sku}'],
    // the first position where kinds differ decides
    ['/a/b/c', ['/a/{x}/c', '/{y}/b/{z}'], '/a/{x}/c'],
    ['/a/b/c', ['/{y}/b/c', '/a/{x}/{z}'], '/a/{x}/{z}'],
    // known templates in any spelling are returned canonically
    ['/posts/17/', ['/posts/{postId}/'], '/posts/{postId}'],
    // no known template matches → the detectors decide
    ['/posts/17', ['/users/{userId}', '/posts'], '/posts/{postId}'],
    ['/posts/17/comments', ['/posts/{postId}'], '/posts/{postId}/comments'],
  ])('%s with known %j → %s', (raw, known, template) => {
    expect(templatePath(raw, known)).toBe(template);
  });
});

describe('sameRoute', () => {
  it.each([
    ['/{name}/components/trim', '/{id}/components/trim', true],
    ['/repos/{owner}/{repo}', '/repos/{repoId}/{name}', true],
    ['/{name}/components/trim', '/{name}/components/trim', false], // itself: nothing to move
    ['/{name}/components/trim', '/heidi/components/trim', false], // a literal: only by the agent's word
    ['/{name}/components/trim', '/{id}/components/rim', false],
    ['/{name}/vehicle', '/{id}/vehicle/{vin}', false],
    ['/users/{user}', '/{section}/{id}', false], // a literal of the template is no parameter of the path
  ])('%s and %s: %s', (template, path, same) => {
    expect(sameRoute(template, path)).toBe(same);
  });
});

describe('matchTemplate', () => {
  it.each([
    ['/posts/{postId}', '/posts/17', true],
    ['/posts/{postId}', '/posts/17/', true],
    ['/posts/{postId}', '/posts/17?x=1', true],
    ['/posts/{postId}', '/posts', false],
    ['/posts/{postId}', '/posts/17/comments', false],
    ['/posts/{postId}', '/Posts/17', false], // paths are case-sensitive
    ['/users/me', '/users/me', true],
    ['/users/me', '/users/you', false],
    ['/users/me', '/users/{userId}', false], // a parameter path is wider than a literal template
    ['/users/{userId}', '/users/{id}', true], // names do not matter
    ['/files/{name}', '/files/a%2Fb', true],
    ['/files/hello world', '/files/hello%20world', true],
    ['/', '/', true],
    ['/', '', true],
    ['/', '/posts', false],
  ])('%s matches %s: %p', (template, path, expected) => {
    expect(matchTemplate(template, path)).toBe(expected);
  });
});

describe('queryNames', () => {
  it.each([
    ['?a=1&b=2&a=3', ['a', 'b']],
    ['a=1&b=2', ['a', 'b']],
    ['/posts?sort=desc&page=2#top', ['page', 'sort']],
    ['/posts', []],
    ['', []],
    ['?', []],
    ['?flag', ['flag']],
    ['?=1&&x', ['x']],
    ['?first+name=Jane&last%20name=Doe', ['first name', 'last name']],
    ['?ids[0]=1&ids[1]=2', ['ids[]']],
    ['?1700000000&_=1700000000123&cb=1', ['_', 'cb']], // a name that is an identifier is a value
    ['?550e8400-e29b-41d4-a716-446655440000', []],
    ['?bad%zz=1', ['bad%zz']],
  ])('%j → %j', (search, names) => {
    expect(queryNames(search)).toEqual(names);
  });

  it('never returns a value', () => {
    const values = ['s3cr3t-value', 'jane@example.com', '4111111111111111'];
    expect(queryNames(`?token=${values[0]}&email=${values[1]}&card=${values[2]}`)).toEqual(['card', 'email', 'token']);
  });
});

describe('identifier detection and singulars', () => {
  it.each([
    ['17', 'weak'],
    ['2024-01-31', 'weak'],
    ['a1b2c3d4', 'weak'],
    ['deadbeef1', 'weak'],
    ['550e8400-e29b-41d4-a716-446655440000', 'strong'],
    ['jane@example.com', 'strong'],
    ['1700000000123', 'strong'],
    ['posts', 'none'],
    ['oauth2', 'none'],
    ['v1', 'none'],
    ['me', 'none'],
    ["'selfie'", 'weak'],
    ['"abc"', 'weak'],
    ['esse dolor', 'none'],
    // BBC pids: a list of values, or no vowel in 8+ letters and digits.
    ['wtcazm,g3', 'weak'],
    ['1,2,3', 'weak'],
    ['gr6gjcxskbvv', 'weak'],
    ['fxtnjzqqh', 'weak'],
    ['v20190125', 'none'],
    ['rhythms', 'none'],
    ['strength', 'none'],
    ['by-id', 'none'],
  ])('%s is %s', (segment, strength) => {
    expect(identifierStrength(segment)).toBe(strength);
  });

  it.each([
    ['posts', 'post'],
    ['categories', 'category'],
    ['people', 'person'],
    ['statuses', 'status'],
    ['status', 'status'],
    ['class', 'class'],
    ['matches', 'match'],
    ['aliases', 'alias'],
    ['boxes', 'box'],
    ['hashes', 'hash'],
    ['responses', 'response'],
    ['databases', 'database'],
    ['sizes', 'size'],
    ['houses', 'house'],
    ['clauses', 'clause'],
    ['buses', 'bus'],
    ['caches', 'cache'],
    ['series', 'series'],
    ['user', 'user'],
    ['s', 's'], // regression: `/a-s/…` named its parameter from an empty word and crashed
  ])('singular(%s) = %s', (word, expected) => {
    expect(singular(word)).toBe(expected);
  });
});

describe('CardinalityLimiter', () => {
  it('keeps positions with few distinct literals', () => {
    const limiter = new CardinalityLimiter({ maxLiterals: 3 });
    expect(['/users/alice', '/users/bob', '/users/carol', '/users/alice'].map((t) => limiter.limit(t))).toEqual([
      '/users/alice',
      '/users/bob',
      '/users/carol',
      '/users/alice',
    ]);
  });

  it('collapses a crowded position into a parameter, for every later template', () => {
    const limiter = new CardinalityLimiter({ maxLiterals: 3 });
    for (const name of ['alice', 'bob', 'carol']) limiter.limit(`/users/${name}/posts`);
    expect(limiter.limit('/users/dave/posts')).toBe('/users/{userId}/posts');
    expect(limiter.limit('/users/alice/posts')).toBe('/users/{userId}/posts');
    expect(limiter.limit('/users/erin')).toBe('/users/{userId}');
    // other prefixes are untouched
    expect(limiter.limit('/teams/red')).toBe('/teams/red');
  });

  it('counts literals per prefix, so siblings do not crowd each other', () => {
    const limiter = new CardinalityLimiter({ maxLiterals: 2 });
    expect(limiter.limit('/a/x')).toBe('/a/x');
    expect(limiter.limit('/a/y')).toBe('/a/y');
    expect(limiter.limit('/b/x')).toBe('/b/x');
    expect(limiter.limit('/b/y')).toBe('/b/y');
    expect(limiter.limit('/a/z')).toBe('/a/{aId}');
  });

  it('merges the subtrees under a collapsed position', () => {
    const limiter = new CardinalityLimiter({ maxLiterals: 2 });
    limiter.limit('/users/a/posts');
    limiter.limit('/users/b/posts');
    expect(limiter.limit('/users/c/posts/{postId}')).toBe('/users/{userId}/posts/{postId}');
    expect(limiter.limit('/users/{userId}/likes')).toBe('/users/{userId}/likes');
  });

  it('keeps parameter names unique', () => {
    const limiter = new CardinalityLimiter({ maxLiterals: 1 });
    limiter.limit('/{id}/a');
    expect(limiter.limit('/{id}/b')).toBe('/{id}/{id2}');
  });

  it('stays within its memory budget and makes unseen prefixes parameters beyond it', () => {
    const limiter = new CardinalityLimiter({ maxLiterals: 1000, maxPrefixes: 10 });
    for (let i = 0; i < 100; i++) limiter.limit(`/x/page-${i}/detail`);
    expect(limiter.trackedPrefixes).toBeLessThanOrEqual(10);
    expect(limiter.limit('/x/page-0/detail')).toBe('/x/page-0/detail'); // tracked before the budget ran out
    expect(limiter.limit('/x/other/detail')).toBe('/x/{xId}/{id}');
  });

  it('bounds the number of templates for 10,000 distinct slugs', () => {
    const limiter = new CardinalityLimiter();
    const templates = new Set<string>();
    for (let i = 0; i < 10_000; i++)
      templates.add(limiter.limit(templatePath(`/articles/slug-number-${i.toString(36)}x/comments`)));
    expect(templates.size).toBeLessThanOrEqual(51);
    expect(templates).toContain('/articles/{articleId}/comments');
  });

  it.each([0, -1, 1.5])('rejects maxLiterals %p', (maxLiterals) => {
    expect(() => new CardinalityLimiter({ maxLiterals })).toThrow(
      `maxLiterals must be a positive integer, got ${maxLiterals}`,
    );
  });
});

describe('templating does linear work on hostile paths', () => {
  // Regressions: a backtracking email pattern took 344 ms on one segment, and naming 4,000
  // parameters 1.6 s (each name tried every suffix before it). Work is counted, never timed: the
  // steps a run takes (regular expression evaluations, set and map look-ups) grow at most as fast
  // as its input, and no expression it evaluates can backtrack super-linearly on a long input.
  it.each([
    ['an email-like segment that fails late', (n: number) => '/x/a@' + 'b.'.repeat(n) + '@'],
    ['identifiers to name', (n: number) => '/x/1'.repeat(n)],
    ['segments', (n: number) => '/x'.repeat(2 * n)],
    ['a mixed token', (n: number) => '/x/' + 'a1'.repeat(2 * n)],
    ['a query', (n: number) => '/x?' + 'a=1&'.repeat(n)],
  ])('%s', (_name, hostile) => {
    const steps = (n: number) =>
      stepsOf(() => {
        templatePath(hostile(n));
        queryNames(hostile(n));
      });
    // Every expression a run evaluates, checked on a short input first (a backtracking one would
    // not come back from the long ones).
    for (const pattern of steps(16).patterns)
      expect({ pattern, superLinear: superLinear(pattern) }).toEqual({ pattern, superLinear: [] });
    const small = steps(1_000);
    const large = steps(4_000);
    // Four times the input, at most four times the steps (and a few more): linear, not quadratic.
    expect(large.steps).toBeLessThanOrEqual(4 * small.steps + 32);
    for (const pattern of large.patterns)
      expect({ pattern, superLinear: superLinear(pattern) }).toEqual({ pattern, superLinear: [] });
  });

  it('counts what it claims: a quadratic run and a backtracking pattern are caught', () => {
    const quadratic = (n: number) =>
      stepsOf(() => {
        const seen = new Set<number>();
        for (let i = 0; i < n; i++) {
          for (let j = 0; j < i; j++) seen.has(j);
          seen.add(i);
        }
      }).steps;
    expect(quadratic(400)).toBeGreaterThan(4 * quadratic(100) + 32);
    // The email pattern before the fix.
    expect(superLinear(/^[^@\s]+@[^@\s]+(?:\.[^@\s]+)+$/)).not.toEqual([]);
  });
});

describe('path template laws', () => {
  const segment = fc.oneof(
    fc.constantFrom(
      'posts',
      'users',
      'api',
      'v1',
      'me',
      '2024-01-31',
      'a1b2c3d4',
      'x%2Fy',
      '%zz',
      '{id}',
      'caf%C3%A9',
      '',
    ),
    fc.nat().map(String),
    fc.uuid(),
    fc.emailAddress(),
    fc.string({ unit: 'grapheme', maxLength: 12 }).map(encodeURIComponent),
    fc.string({ maxLength: 12 }),
  );
  const rawPath = fc.array(segment, { maxLength: 6 }).map((segments) => '/' + segments.join('/'));
  const known = fc.array(
    rawPath.map((p) => templatePath(p)),
    { maxLength: 4 },
  );

  it('a template matches the raw path it came from', () => {
    fc.assert(
      fc.property(rawPath, known, (raw, documented) =>
        expect(matchTemplate(templatePath(raw, documented), raw)).toBe(true),
      ),
    );
  });

  it('templating is idempotent', () => {
    fc.assert(
      fc.property(rawPath, known, (raw, documented) => {
        const template = templatePath(raw, documented);
        expect(templatePath(template, documented)).toBe(template);
      }),
    );
  });

  it('a limited template still matches the raw path', () => {
    const limiter = new CardinalityLimiter({ maxLiterals: 2 });
    fc.assert(fc.property(rawPath, (raw) => expect(matchTemplate(limiter.limit(templatePath(raw)), raw)).toBe(true)));
  });

  it('never throws, and always gives a path, whatever the input', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 60 }),
        fc.array(fc.string({ maxLength: 20 }), { maxLength: 3 }),
        (raw, documented) => {
          expect(templatePath(raw, documented)).toMatch(/^\//);
          expect(Array.isArray(queryNames(raw))).toBe(true);
        },
      ),
    );
  });

  it('no uuid or email survives templating', () => {
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 4 }), fc.oneof(fc.uuid(), fc.emailAddress()), (segments, value) => {
        const template = templatePath(['', ...segments, encodeURIComponent(value)].join('/'));
        expect(decodeURIComponent(template)).not.toContain(value);
      }),
    );
  });
});
