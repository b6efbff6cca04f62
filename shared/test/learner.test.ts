import fc from 'fast-check';
import { PathLearner, responseKeys, templatePath } from '../src/paths/template';
import { inferShape } from '../src/shape/infer';

const user = (login: string) => responseKeys(inferShape({ login, id: 1, name: 'N', bio: null }));
const repo = responseKeys(inferShape({ id: 1, name: 'web', full_name: 'o/web', private: false }));
const list = (item: object) => responseKeys(inferShape([item]));

/** Feed raw paths (templated by the detectors first) and resolve each. */
function learn(
  learner: PathLearner,
  traffic: Array<[string, string, readonly string[] | null, (readonly string[] | null)?]>,
): void {
  for (const [method, raw, keys, requestKeys] of traffic)
    learner.observe(templatePath(raw), method, keys, requestKeys ?? null);
}

/** Feed a raw path read (`GET`) with query names, as the agent does: the names noted first, then the answer. */
function readWith(learner: PathLearner, raw: string, query: readonly string[], keys: readonly string[] | null): void {
  learner.noteQuery(templatePath(raw), query);
  learner.observe(templatePath(raw), 'GET', keys, null);
}

/** Feed a raw path answered with no body, noting its identifier values as the agent does. */
function answeredNothing(learner: PathLearner, method: string, raw: string): void {
  learner.observe(templatePath(raw), method, null);
  learner.noteIdentifiers(templatePath(raw), raw);
}

/**
 * wikimedia.org-like paths: metrics × projects × enumerated positions × names, each seen once (`count` of them, the same
 * for the same count). Each position learned there decides every record again.
 */
function metricsPaths(count: number): string[] {
  let seed = 7;
  const next = (n: number): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % n;
  };
  const pick = <T>(of: readonly T[]): T => of[next(of.length)]!;
  const first = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi'];
  const more = ['ivan', 'judy', 'mallory', 'oscar', 'peggy', 'trent', 'victor', 'walter'];
  const people = [...first, ...more];
  const second = ['acme', 'initech', 'globex', 'umbrella', 'hooli', 'tyrell', 'wonka', 'stark'];
  const name = () => (next(2) === 1 ? `${pick(people)}-${pick(second)}` : `${pick(people)}${next(90) + 1}`);
  const granularity = ['daily', 'monthly'];
  const metrics: Array<[string, string[], string[][]]> = [
    [
      'edited-pages',
      ['new', 'aggregate'],
      [
        ['all-editor-types', 'anonymous', 'user', 'group-bot'],
        ['all-page-types', 'content', 'non-content'],
        granularity,
      ],
    ],
    ['registered-users', ['new'], [granularity]],
    ['unique-devices', [], [['all-sites', 'desktop-site', 'mobile-site'], granularity]],
    [
      'pageviews',
      ['aggregate', 'per-article'],
      [
        ['all-access', 'desktop', 'mobile-app', 'mobile-web'],
        ['all-agents', 'user', 'spider', 'automated'],
        ['hourly', ...granularity],
      ],
    ],
    [
      'editors',
      ['aggregate', 'top-by-edits'],
      [['all-editor-types', 'anonymous', 'user'], ['all-page-types', 'content'], granularity],
    ],
    [
      'bytes-difference',
      ['absolute', 'net'],
      [['all-editor-types', 'user', 'group-bot'], ['all-page-types', 'content', 'non-content'], granularity],
    ],
  ];
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const [metric, kinds, enumerations] = pick(metrics);
    const segments = ['metrics', metric, ...(kinds.length > 0 ? [pick(kinds)] : []), name()];
    for (const values of enumerations) segments.push(pick(values));
    segments.push(name(), name());
    paths.push(`/${segments.join('/')}`);
  }
  return paths;
}

/** What `metricsPaths` answer. */
const metricsFields = ['count', 'granularity', 'items', 'project', 'timestamp'];

describe('PathLearner', () => {
  it('makes a position of names a parameter after two values with the same response fields', () => {
    const learner = new PathLearner();
    learn(learner, [['GET', '/users/alice', user('alice')]]);
    // One value: nothing to compare, it stays literal (and undecided).
    expect(learner.resolve(templatePath('/users/alice'))).toBe('/users/alice');
    expect(learner.undecided('/users/alice')).toBe(true);
    learn(learner, [['GET', '/users/bob', user('bob')]]);
    expect(learner.resolve(templatePath('/users/alice'))).toBe('/users/{user}');
    expect(learner.resolve(templatePath('/users/carol'))).toBe('/users/{user}');
    expect(learner.undecided('/users/{user}')).toBe(false);
  });

  it('learns consecutive names from shared continuations and names them owner and repo', () => {
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/repos/alice/web/issues', list({ number: 1, title: 't' })],
      ['GET', '/repos/bob/cli/pulls', list({ number: 1, head: 'h' })],
    ]);
    expect(learner.resolve('/repos/alice/web/issues')).toBe('/repos/alice/web/issues');
    learn(learner, [['GET', '/repos/bob/cli/issues', list({ number: 2, title: 'u' })]]);
    expect(learner.resolve('/repos/dave/api/issues')).toBe('/repos/{owner}/{repo}/issues');
    expect(learner.resolve('/repos/dave/api/pulls')).toBe('/repos/{owner}/{repo}/pulls');
  });

  it('names values in waiting before an identifier as a parameter, and leaves a single value or routes literal', () => {
    const learner = new PathLearner();
    const quote = list({ bid: 1, ask: 2, at: 3 });
    learn(learner, [['GET', '/v1/historic/quotes/wonka/2020-01-10', quote]]);
    const wonka = templatePath('/v1/historic/quotes/wonka/2020-01-10');
    // One name before an identifier: held (undecided), and when its hold ends it goes out as it is, the identifier not
    // named after it (`{wonkaId}`).
    expect(learner.undecided(learner.resolve(wonka), wonka)).toBe(true);
    expect(learner.pending(learner.resolve(wonka), wonka)).toBe('/v1/historic/quotes/wonka/{id}');
    learn(learner, [['GET', '/v1/historic/quotes/erin/2020-01-11', quote]]);
    // Two alike, fewer than the four that learn such a position: not learned, but none goes out as it is.
    expect(learner.resolve(wonka)).toBe(wonka);
    expect(learner.pending(learner.resolve(wonka), wonka)).toBe('/v1/historic/quotes/{quote}/{quoteId}');
    // Routes answering other fields (collections) stay literal.
    const calls = list({ from: 'a', to: 'b' });
    const conferences = list({ name: 'n', members: 2 });
    learn(learner, [
      ['GET', '/self/calls/17', calls],
      ['GET', '/self/conferences/18', conferences],
    ]);
    const call = templatePath('/self/calls/17');
    expect(learner.pending(learner.resolve(call), call)).toBe('/self/calls/{id}');
    // A collection shown (three identifier values after it) is a route word: its identifier keeps its name.
    for (const id of ['18', '19']) learner.noteIdentifiersAfter(call, `/self/calls/${id}`);
    learner.noteIdentifiersAfter(call, '/self/calls/17');
    expect(learner.pending(learner.resolve(call), call)).toBe(call);
  });

  it('names values in waiting after an identifier as a parameter, and leaves the route words of a resource literal', () => {
    const learner = new PathLearner();
    const nothing = responseKeys(inferShape({}));
    const answered = (method: string, raw: string, keys: readonly string[] | null): void => {
      learner.noteQuery(templatePath(raw), []);
      learn(learner, [[method, raw, keys]]);
      learner.noteIdentifiers(templatePath(raw), raw);
    };
    // billbee's names after orders, each once answering `{}`: three, fewer than the four that learn such a position.
    answered('GET', '/orders/209427/stark-core', nothing);
    const core = templatePath('/orders/209427/stark-core');
    // Alone, it goes out as it is when its hold ends.
    expect(learner.pending(learner.resolve(core), core)).toBe(core);
    answered('GET', '/orders/815320/stark-billing', nothing);
    answered('GET', '/orders/254210/oscar-payments', nothing);
    expect(learner.resolve(core)).toBe(core);
    expect(learner.undecided(learner.resolve(core), core)).toBe(true);
    expect(learner.pending(learner.resolve(core), core)).toBe('/orders/{orderId}/{order}');
    // The words of one resource (after the same post, or after two) stay literal.
    answered('GET', '/posts/5/comments', nothing);
    answered('GET', '/posts/5/likes', nothing);
    answered('GET', '/posts/6/shares', nothing);
    answered('GET', '/posts/7/shares', nothing);
    answered('GET', '/posts/8/tags', nothing);
    for (const raw of ['/posts/5/comments', '/posts/6/shares', '/posts/8/tags']) {
      const post = templatePath(raw);
      expect(learner.pending(learner.resolve(post), post)).toBe(post);
    }
  });

  it('sends the words of a route requested under other values of a learned position as they are, not as names in a row', () => {
    const learner = new PathLearner();
    const requested = (method: string, raw: string, keys: readonly string[] | null): void => {
      learner.noteQuery(templatePath(raw), []);
      learn(learner, [[method, raw, keys]]);
    };
    const scenarios = list({ scenarioName: 's', scenarioJson: {} });
    for (const game of ['acme', 'bob', 'carol', 'dave']) requested('GET', `/games/${game}/admin/scenarios`, scenarios);
    expect(learner.resolve('/games/erin/admin/scenarios')).toBe('/games/{game}/admin/scenarios');
    // gamesparks' test notifications, answered 500 with many games, then 403 with one requested on another route too.
    for (const game of ['acme', 'bob', 'carol']) requested('POST', `/games/${game}/admin/push/amazon`, null);
    requested('POST', '/games/frank/admin/push/amazon', null);
    requested('DELETE', '/games/frank/admin/scenarios/umbrella', null);
    const push = '/games/frank/admin/push/amazon';
    expect(learner.pending(learner.resolve(push), push)).toBe('/games/{game}/admin/push/amazon');
    // Names in a row under a game, each requested once, still go out as parameters.
    requested('GET', '/games/frank/admin/alice/smith', null);
    const names = '/games/frank/admin/alice/smith';
    expect(learner.pending(learner.resolve(names), names)).toBe('/games/{game}/admin/{owner}/{admin}');
  });

  it('takes many values each requested once after a route word for values, whatever they answer', () => {
    // aviationdata's `/v1/airport/autocomplete/{airport_name}` (held-out 5): seven names each requested once,
    // answering `{}`, `{disclaimer}`, `{airport_list}`: nothing alike, so they went out as they are.
    const learner = new PathLearner();
    const request = (raw: string, keys: readonly string[] | null) => {
      learner.noteQuery(templatePath(raw), []);
      learner.observe(templatePath(raw), 'GET', keys, null);
    };
    const answers = [{}, { disclaimer: 'd' }, { airport_list: [{ value: 'v' }] }, { message: 'm', status_code: 's' }];
    ['alice', 'bob-search', 'Carol48', 'dave-mobile'].forEach((name, i) =>
      request(`/stations/${17 + i}/${name}`, responseKeys(inferShape(answers[i]))),
    );
    expect(learner.resolve(templatePath('/stations/21/erin'))).toBe('/stations/{stationId}/{station}');
    // Route words recur with every request of their routes: four requested twice each stay literal.
    const words = new PathLearner();
    for (const round of [0, 1])
      ['history', 'forecast', 'alerts', 'sensors'].forEach((word, i) => {
        const raw = `/stations/${30 + i + round}/${word}`;
        words.noteQuery(templatePath(raw), []);
        words.noteQuery(templatePath(raw), []);
        words.observe(templatePath(raw), 'GET', responseKeys(inferShape(answers[i])), null);
      });
    expect(words.resolve(templatePath('/stations/40/history'))).toBe('/stations/{stationId}/history');
  });

  it('takes many literals each read once beside identifiers ending paths for values of that identifier', () => {
    // threatjammer's `/v1/ua/type/{code}` (held-out 18): codes the detectors take for identifiers half the time
    // (`7GNZ757EV`) and for words the rest (`K9`, `4SNH`, `Heidi34`), the words then route words beside identifiers,
    // sent as they are (names among them).
    const codes = ['Heidi34', 'K9', '4SNH', 'LXU', 'DBURKZU'];
    const identifiers = ['7GNZ757EV', 'AVM0YTGPFH1'];
    const answer = responseKeys(inferShape({ type: 't', description: 'd' }));
    const request = (learner: PathLearner, raw: string) => {
      learner.noteQuery(templatePath(raw), []);
      learner.observe(templatePath(raw), 'GET', answer, null);
    };
    // In either order: the identifiers before the literals or after them.
    for (const order of [
      [...identifiers, ...codes],
      [...codes, ...identifiers],
    ]) {
      const learner = new PathLearner();
      for (const code of order) request(learner, `/v1/ua/type/${code}`);
      for (const code of codes)
        expect(learner.resolve(templatePath(`/v1/ua/type/${code}`))).toBe('/v1/ua/type/{typeId}');
    }
    // Route words beside identifiers recur with every request of their routes: read twice each, they keep their text.
    const words = new PathLearner();
    for (const id of identifiers) request(words, `/pets/${id}`);
    for (const word of ['findByStatus', 'findByTags', 'latest', 'random', 'popular']) {
      words.noteQuery(templatePath(`/pets/${word}`), []);
      request(words, `/pets/${word}`);
    }
    expect(words.resolve(templatePath('/pets/findByStatus'))).toBe('/pets/findByStatus');
  });

  it('takes literals each replaced or deleted once beside identifiers for values too, not those posted', () => {
    // shipengine's `/v1/packages/{package_id}` (held-out 20): ids the detectors take for words when short (`se-vba`),
    // each requested once, by GET, PUT or DELETE (answered 204), went out as they are.
    const detected = ['se-8nllbf-zu7fu-frv-44fqd', 'se-z1034k-g1z7o7uby-wdd6z'];
    const words: Array<[string, string]> = [
      ['PUT', 'se-mb1xpp'],
      ['DELETE', 'se-j3mk2de1-zuk'],
      ['GET', 'se-vba'],
      ['PUT', 'se-pe1ep'],
      ['DELETE', 'se-8urh'],
    ];
    const answer = responseKeys(inferShape({ package_id: 'p', name: 'n', package_code: 'c' }));
    const learner = new PathLearner();
    const request = (method: string, raw: string) => {
      learner.noteQuery(templatePath(raw), []);
      learner.observe(templatePath(raw), method, method === 'GET' ? answer : null, null);
    };
    for (const id of detected) request('GET', `/v1/packages/${id}`);
    for (const [method, word] of words) request(method, `/v1/packages/${word}`);
    for (const [, word] of words)
      expect(learner.resolve(templatePath(`/v1/packages/${word}`))).toBe('/v1/packages/{packageId}');
    // Actions beside identifiers are posted (`POST /messages/send` beside `/messages/17`): they keep their text.
    const actions = new PathLearner();
    const post = (method: string, raw: string) => {
      actions.noteQuery(templatePath(raw), []);
      actions.observe(templatePath(raw), method, null, null);
    };
    for (const id of detected) post('GET', `/v1/messages/${id}`);
    for (const word of ['send', 'schedule', 'cancel', 'retry', 'preview']) post('POST', `/v1/messages/${word}`);
    expect(actions.resolve(templatePath('/v1/messages/send'))).toBe('/v1/messages/send');
  });

  it('sends no literal read once beside identifiers under a route word found late among learned values', () => {
    // threatjammer's `/v1/ua/device/{code}` beside `/v1/ua/{user_agent}` (held-out 18): `device` is a collection
    // (`/v1/ua/device/7EIWB12AH`) found after its first codes, which each index placed under `/v1/ua/{}` then.
    const learner = new PathLearner();
    const answer = responseKeys(inferShape({ ua: 'u', device: { type: 't' }, os: { name: 'n' } }));
    const request = (raw: string) => {
      learner.noteQuery(templatePath(raw), []);
      learner.observe(templatePath(raw), 'GET', answer, null);
    };
    for (const agent of ['acme-north', 'carol', 'hooli', 'judy']) request(`/v1/ua/${agent}`);
    for (const code of ['IRF', 'IF_W', 'Victor21', '7CQI', '7EIWB12AH', 'SQ39', 'IA35P96J6', 'Mallory12'])
      request(`/v1/ua/device/${code}`);
    for (const code of ['IRF', 'Victor21', 'Mallory12'])
      expect(learner.resolve(templatePath(`/v1/ua/device/${code}`))).not.toContain(code);
  });

  it('counts the requests of a route word after a learned name with every name, not per name', () => {
    // enanomapper's `/enm/{db}/substance/{uuid}/study` (held-out 7): each database's path of a route word is requested
    // once, but the route word is requested with every database, so its four route words stay literal.
    const learner = new PathLearner();
    const request = (raw: string, body: object) => {
      learner.noteQuery(templatePath(raw), []);
      learner.observe(templatePath(raw), 'GET', responseKeys(inferShape(body)), null);
    };
    const routes = {
      study: { study: [{ a: 1 }] },
      composition: { composition: [{ b: 1 }] },
      structures: { dataEntry: [{ c: 1 }] },
      summary: { facet: [{ d: 1 }] },
    };
    let n = 0;
    const uuid = () => `5c104d16-642c-485d-bdfb-${100_000_000_000 + n++}`;
    for (const db of ['nanoreg', 'marina', 'calibrate', 'enpra']) {
      request(`/enm/${db}/substance`, { substance: [{ i: 1 }] });
      for (const [route, body] of Object.entries(routes)) request(`/enm/${db}/substance/${uuid()}/${route}`, body);
    }
    expect(learner.resolve(templatePath('/enm/nanoreg/substance'))).toBe('/enm/{enm}/substance');
    expect(learner.resolve(templatePath(`/enm/nanoreg/substance/${uuid()}/study`))).toBe(
      '/enm/{enm}/substance/{substanceId}/study',
    );
  });

  it('keeps a name before an identifier, among names before identifiers, a value whatever it answers', () => {
    // circleci's `/project/{username}/{project}/{build_num}` (held-out 5): a mock's builds answer random optional
    // fields, so `erin-dinner` and `walter` contradicted every sibling and were kept exceptions (route words),
    // sent as they are with the identifier named after them (`/project/{project}/erin-dinner/{erinDinnerId}`).
    const learner = new PathLearner();
    const build = responseKeys(inferShape({ build_num: 1, status: 's', subject: 's', vcs_url: 'u', branch: 'b' }));
    const other = responseKeys(inferShape({ all_commit_details: [], compare: 'c', job_name: 'j', timedout: false }));
    const cancel = responseKeys(inferShape({ build_url: 'u', outcome: 'o', previous: { build_num: 1 } }));
    const steps = list({ step: 1, action: 'a' });
    const observe = (traffic: ReadonlyArray<readonly [string, string, readonly string[] | null]>) => {
      for (const [method, raw, keys] of traffic) {
        learner.observe(templatePath(raw), method, keys, null);
        learner.noteIdentifiers(templatePath(raw), raw);
        learner.noteIdentifiersAfter(templatePath(raw), raw);
      }
    };
    const resolve = (raw: string) => learner.resolve(templatePath(raw));
    observe([
      ['GET', '/project/alice/web/envvar', list({ name: 'n', value: 'v' })],
      ['GET', '/project/bob/cli/envvar', list({ name: 'n', value: 'v' })],
      ['GET', '/project/carol/api/envvar', list({ name: 'n', value: 'v' })],
      ['GET', '/project/dave/docs/1017', build],
    ]);
    // The first build: an identifier after it, a word after its siblings (other routes), nothing against it.
    expect(resolve('/project/dave/docs/1017')).toBe('/project/{owner}/{project}/{projectId}');
    observe([
      ['GET', '/project/erin/site/1018', build],
      ['GET', '/project/frank/erin-dinner/1019', other],
      ['POST', '/project/grace/ops/1020/cancel', cancel],
      ['POST', '/project/heidi/mobile/1021/cancel', cancel],
      [
        'POST',
        '/project/ivan/walter/1022/cancel',
        responseKeys(inferShape({ branch: 'b', dont_build: 'd', queued_at: 'q' })),
      ],
      // A collection of two owners answering fields of its own: a route word, kept literal.
      ['GET', '/project/judy/builds/1023', steps],
      ['GET', '/project/karl/builds/1024', steps],
    ]);
    expect(resolve('/project/frank/erin-dinner/1019')).toBe('/project/{owner}/{project}/{projectId}');
    expect(resolve('/project/ivan/walter/1022/cancel')).toBe('/project/{owner}/{project}/{projectId}/cancel');
    expect(resolve('/project/judy/builds/1023')).toBe('/project/{project}/builds/{buildId}');
  });

  it('keeps route words whose responses differ literal, and the first segment always', () => {
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/admin/users', list({ login: 'a', id: 1 })],
      ['GET', '/admin/posts', list({ title: 't', body: 'b' })],
      ['GET', '/admin/users/export', null],
      ['GET', '/admin/posts/export', null],
      ['GET', '/users', list({ login: 'a', id: 1 })],
      ['GET', '/posts', list({ login: 'a', id: 1 })],
    ]);
    expect(learner.resolve('/admin/users')).toBe('/admin/users');
    expect(learner.resolve('/admin/posts/export')).toBe('/admin/posts/export');
    expect(learner.resolve('/posts')).toBe('/posts');
    expect(learner.generation).toBe(0);
  });

  it('takes free text (words with spaces) at a learned position for a value, whatever it answers', () => {
    const fields = (...names: string[]) => responseKeys(inferShape(Object.fromEntries(names.map((n) => [n, 1]))));
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/numbers/alice', fields('number', 'status', 'created')],
      ['GET', '/numbers/bob', fields('number', 'status', 'created')],
      // Answers of other fields: a single word so is a route word (an exception), text with spaces is no word.
      ['GET', '/numbers/summary', fields('total', 'active')],
      ['GET', '/numbers/esse%20dolor', fields('plan', 'quota', 'email')],
    ]);
    expect(learner.resolve(templatePath('/numbers/summary'))).toBe('/numbers/summary');
    expect(learner.resolve(templatePath('/numbers/esse%20dolor'))).toBe('/numbers/{number}');
    // A quoted value is a parameter from the first sight (`'selfie'`): route words are never quoted.
    expect(templatePath("/users/alice/token/'selfie'")).toBe('/users/alice/token/{tokenId}');
  });

  it('keeps routes that are the same as one value but contradict one another literal (/auth/logout)', () => {
    const fields = (...names: string[]) => responseKeys(inferShape(Object.fromEntries(names.map((n) => [n, 1]))));
    const learner = new PathLearner();
    learn(learner, [
      ['POST', '/auth/logout', null],
      ['POST', '/auth/ping', fields('email', 'password', 'username')],
      ['POST', '/auth/register', fields('token', 'username'), fields('password', 'username', 'email')],
      ['POST', '/auth/login/apinf', fields('token', 'username'), fields('password', 'username')],
      ['POST', '/auth/login', fields('token', 'username'), fields('password', 'username')],
    ]);
    // `logout` (nothing to compare) is the same as three routes, but `ping` contradicts `login`: no values.
    expect(learner.resolve('/auth/logout')).toBe('/auth/logout');
    expect(learner.resolve('/auth/login')).toBe('/auth/login');
    expect(learner.resolve('/auth/login/apinf')).toBe('/auth/login/apinf');
    expect(learner.generation).toBe(0);
  });

  it('keeps a value whose response contradicts its siblings literal (/users/me)', () => {
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/users/me', responseKeys(inferShape({ plan: 'x', email: 'e', quota: 1, settings: {} }))],
      ['GET', '/users/alice', user('alice')],
      ['GET', '/users/bob', user('bob')],
    ]);
    expect(learner.resolve('/users/me')).toBe('/users/me');
    expect(learner.resolve('/users/carol')).toBe('/users/{user}');
  });

  it('never learns versions, values after api or a version from two alike, or beside detected identifiers', () => {
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/api/v1/users', list({ id: 1 })],
      ['GET', '/api/v2/users', list({ id: 1 })],
      ['GET', '/marketing/segments/2.0/17', repo],
      ['GET', '/marketing/segments/3.1/17', repo],
      ['GET', '/pets/17', repo],
      ['GET', '/pets/findByStatus', list({ id: 1, name: 'n' })],
      ['GET', '/pets/findByTags', list({ id: 1, name: 'n' })],
    ]);
    expect(learner.resolve('/api/v1/users')).toBe('/api/v1/users');
    expect(templatePath('/marketing/segments/2.0/17')).toBe('/marketing/segments/2.0/{id}');
    expect(learner.resolve(templatePath('/marketing/segments/2.0/17'))).toBe('/marketing/segments/2.0/{id}');
    expect(learner.resolve('/pets/findByTags')).toBe('/pets/findByTags');
    expect(learner.undecided('/pets/findByTags')).toBe(false);
  });

  it('keeps an action ending a path where identifiers are seen literal, whatever follows the identifiers', () => {
    // spoonacular.com (held-out 18): `POST /recipes/analyze`, `/recipes/visualizeNutrition`, … beside
    // `/recipes/17/information`, and GET words alike there that made `/recipes/{recipe}`.
    const found = list({ id: 1, title: 't', imageType: 'i' });
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/recipes/17/information', repo],
      ['GET', '/recipes/autocomplete', found],
      ['GET', '/recipes/findByIngredients', found],
      ['POST', '/recipes/analyze', null],
      ['POST', '/recipes/cuisine', null],
      ['POST', '/recipes/parseIngredients', null],
      ['POST', '/recipes/visualizeNutrition', null],
      ['POST', '/recipes/visualizeTaste', null],
    ]);
    expect(learner.resolve('/recipes/analyze')).toBe('/recipes/analyze');
    expect(learner.resolve('/recipes/visualizeTaste')).toBe('/recipes/visualizeTaste');
    expect(learner.undecided('/recipes/cuisine')).toBe(false);
    // A value read there is one as before (`/providernetworks/{uid}` beside `/providernetworks/17/prices`).
    expect(learner.resolve('/recipes/carol')).toBe('/recipes/{recipe}');
  });

  it('keeps leaves read again with query names of their own beside identifiers literal (/recipes/autocomplete)', () => {
    // spoonacular.com (held-out 18): GET words beside `/recipes/17/information`, each requested 6 to 13 times with
    // query names of its own, answering alike lists, went out as `/recipes/{recipe}`.
    const found = list({ id: 1, title: 't', imageType: 'i' });
    const words: Array<[string, string[]]> = [
      ['autocomplete', ['number', 'query']],
      ['findByIngredients', ['ingredients', 'number', 'ranking']],
      ['quickAnswer', ['q']],
    ];
    const send = (learner: PathLearner, raw: string, query: readonly string[]) => readWith(learner, raw, query, found);
    const learner = new PathLearner();
    send(learner, '/recipes/17/information', []);
    // Read once each, they are what names look like there (`/providernetworks/grace` beside `/providernetworks/17/prices`).
    for (const [word, query] of words) send(learner, `/recipes/${word}`, query);
    expect(learner.resolve('/recipes/autocomplete')).toBe('/recipes/{recipe}');
    // Read again, each with names the others never took: routes of their own.
    for (let round = 0; round < 2; round++) for (const [word, query] of words) send(learner, `/recipes/${word}`, query);
    for (const [word] of words) expect(learner.resolve(`/recipes/${word}`)).toBe(`/recipes/${word}`);
    expect(learner.undecided('/recipes/quickAnswer')).toBe(false);
    // Names read again with their route's query names (a CI run's fixtures) are values as before: no name leaves.
    const names = new PathLearner();
    send(names, '/recipes/17/information', []);
    for (let round = 0; round < 3; round++)
      for (const name of ['alice', 'bob-infra', 'Carol74']) send(names, `/recipes/${name}`, ['fields', 'lang']);
    for (const name of ['alice', 'bob-infra', 'Carol74'])
      expect(names.resolve(`/recipes/${name}`)).toBe('/recipes/{recipe}');
  });

  it('keeps leaves read again with query names of their own literal where no identifier is seen (/ein/lookup)', () => {
    // brex.io (held-out 20): `GET /api/v1/ein-verification/{lookup, comprehensive-check}`, requested 9 times each with
    // query names of their own (`name`, `state`, `zip`; `ein`), answering alike, went out as `/…/{einVerification}`;
    // visagecloud's `/rest/v1.1/analysis/{compare, listLatest, retrieve}` (held-out 18) the same.
    const found = responseKeys(inferShape({ matched_ein_companies: [], searchterm_name: 's', ein: 'e' }));
    const words: Array<[string, string[]]> = [
      ['lookup', ['name', 'state', 'zip']],
      ['comprehensive-check', ['ein']],
    ];
    const send = (learner: PathLearner, raw: string, query: readonly string[]) => readWith(learner, raw, query, found);
    const learner = new PathLearner();
    // Read once each, they are what names look like (`/users/alice`, `/users/bob` answering alike).
    for (const [word, query] of words) send(learner, `/api/v1/ein-verification/${word}`, query);
    expect(learner.resolve('/api/v1/ein-verification/lookup')).toBe('/api/v1/ein-verification/{einVerification}');
    // Read again, each with names the other never took: routes of their own.
    for (let round = 0; round < 2; round++)
      for (const [word, query] of words) send(learner, `/api/v1/ein-verification/${word}`, query);
    for (const [word] of words)
      expect(learner.resolve(`/api/v1/ein-verification/${word}`)).toBe(`/api/v1/ein-verification/${word}`);
    // Names read again with their route's query names (a CI run's fixtures) are values as before: no name leaves.
    const names = new PathLearner();
    for (let round = 0; round < 3; round++)
      for (const name of ['alice', 'bob-infra']) send(names, `/users/${name}`, ['fields', 'lang']);
    for (const name of ['alice', 'bob-infra']) expect(names.resolve(`/users/${name}`)).toBe('/users/{user}');
    // An optional name sent with one of them and not the other tells nothing.
    const optional = new PathLearner();
    for (let round = 0; round < 3; round++) {
      send(optional, '/users/alice', ['fields', 'lang']);
      send(optional, '/users/bob-infra', ['fields']);
    }
    expect(optional.resolve('/users/alice')).toBe('/users/{user}');
  });

  it('learns names right after a version from four alike values among sixteen, and keeps route words literal', () => {
    const brands = list({ name: 'n', displayName: 'd', state: 's' });
    const account = responseKeys(inferShape({ name: 'n', accountId: 'a', created: 'c' }));
    const names = Array.from({ length: 16 }, (_, i) => `name-${String.fromCharCode(97 + i)}`);
    const learner = new PathLearner();
    learn(learner, [
      ...names
        .slice(0, 13)
        .map((name): [string, string, readonly string[] | null] => ['GET', `/v3/${name}/icons`, null]),
      ['GET', '/v3/erin', account],
      ['GET', '/v3/acme/brands', brands],
      ['GET', '/v3/bob/brands', brands],
    ]);
    // Three alike are what a few route words sharing a continuation look like (`/v1/users/search`, `/v1/orgs/search`).
    expect(learner.resolve('/v3/acme/brands')).toBe('/v3/acme/brands');
    expect(learner.changeable('/v3/acme/brands')).toBe(true);
    // Not held: every path of a versioned API has a segment there, as at the first segment.
    expect(learner.undecided('/v3/acme')).toBe(false);
    learn(learner, [['GET', '/v3/carol/brands', brands]]);
    expect(learner.resolve('/v3/acme/brands')).toBe('/v3/acme/brands');
    // The fourth alike, the seventeenth value: names, not an API's few resources.
    learn(learner, [['GET', '/v3/dave/brands', brands]]);
    expect(learner.resolve('/v3/acme/brands')).toBe('/v3/{name}/brands');
    expect(learner.resolve('/v3/zoe/brands')).toBe('/v3/{name}/brands');
    expect(learner.resolve(`/v3/${names[0]!}/icons`)).toBe('/v3/{name}/icons');
    expect(learner.resolve('/v3/erin')).toBe('/v3/{name}');
    // A route word there answering other fields than the values stays literal (an exception).
    learn(learner, [
      ['GET', '/v3/frank', account],
      ['GET', '/v3/status', responseKeys(inferShape({ healthy: true, uptime: 1, region: 'r' }))],
    ]);
    expect(learner.resolve('/v3/status')).toBe('/v3/status');
    expect(learner.resolve('/v3/erin')).toBe('/v3/{name}');
    // The words after them are route words: learned from four alike values, not from two.
    learn(learner, [
      ['GET', '/v3/acme/hotels', brands],
      ['GET', '/v3/bob/listings', brands],
    ]);
    expect(learner.resolve('/v3/acme/hotels')).toBe('/v3/{name}/hotels');
  });

  it('keeps four resources after a version literal however alike they answer (/open-banking/v2.2/…)', () => {
    const products = responseKeys(inferShape({ data: [{ brand: 'b', products: [] }], links: {}, meta: {} }));
    const learner = new PathLearner();
    const words = ['business-current-accounts', 'commercial-credit-cards', 'personal-current-accounts', 'sme-loans'];
    learn(learner, [
      ...words.map((word): [string, string, readonly string[] | null] => [
        'GET',
        `/open-banking/v2.2/${word}`,
        products,
      ]),
      ...words.map((word): [string, string, readonly string[] | null] => [
        'GET',
        `/x-open-banking/v2.2/${word}/segment/retail`,
        products,
      ]),
    ]);
    expect(learner.resolve('/open-banking/v2.2/sme-loans')).toBe('/open-banking/v2.2/sme-loans');
    expect(learner.generation).toBe(0);
  });

  it('keeps resources after api literal: four in one paged envelope among more answering their own (avaza)', () => {
    const paged = (items: string) =>
      responseKeys(inferShape({ PageNumber: 1, PageSize: 2, TotalCount: 3, [items]: [] }));
    const own = (...fields: string[]) => responseKeys(inferShape(Object.fromEntries(fields.map((f) => [f, 'v']))));
    const learner = new PathLearner();
    learn(learner, [
      ...['Project', 'Task', 'Timesheet', 'Webhook', 'Inventory', 'BillPayment', 'TimesheetTimer', 'Folder'].map(
        (word, i): [string, string, readonly string[] | null] => ['GET', `/api/${word}/${100 + i}`, repo],
      ),
      ['GET', '/api/Currency', own('Currencies', 'Symbol', 'Code')],
      ['POST', '/api/Company', own('BillingAddress', 'CompanyName', 'Phone')],
      ['GET', '/api/Account', own('AccountEmail', 'BrandColor', 'TimeZone')],
      ['GET', '/api/Webhook', own('Webhooks', 'Count', 'Next')],
      ['GET', '/api/ProjectTimesheetCategory', own('Categories', 'Budget', 'Owner')],
      ['GET', '/api/Invoice', paged('Invoices')],
      ['GET', '/api/Payment', paged('Payments')],
      ['GET', '/api/CreditNote', paged('CreditNotes')],
      ['GET', '/api/ScheduleAssignment', paged('Assignments')],
    ]);
    // Seventeen values there, four alike: an API's lists in one envelope, each contradicting more than it agrees with.
    expect(learner.resolve('/api/Invoice')).toBe('/api/Invoice');
    expect(learner.resolve('/api/Currency')).toBe('/api/Currency');
    expect(learner.generation).toBe(0);
  });

  it('keeps route words after a version literal: three alike, collections, other answers', () => {
    const learner = new PathLearner();
    const found = list({ id: 1, score: 0.5 });
    learn(learner, [
      ['GET', '/v1/users/search', found],
      ['GET', '/v1/orgs/search', found],
      ['GET', '/v1/teams/search', found],
      ['GET', '/v1/projects/17', repo],
      ['GET', '/v1/projects/search', found],
      ['GET', '/api/alerts/count', responseKeys(inferShape({ count: 1, since: 'd' }))],
      ['GET', '/api/events/count', responseKeys(inferShape({ total: 1, window: 'w' }))],
      ['GET', '/api/errors/count', responseKeys(inferShape({ errors: 1, rate: 0.1 }))],
      ['GET', '/api/deploys/count', responseKeys(inferShape({ deploys: 1, last: 'l' }))],
    ]);
    // `projects` is a collection (`/v1/projects/17`): a route word, so only three values could be alike.
    expect(learner.resolve('/v1/users/search')).toBe('/v1/users/search');
    expect(learner.resolve('/api/alerts/count')).toBe('/api/alerts/count');
    expect(learner.generation).toBe(0);
  });

  it('keeps collections literal: a value followed by a detected identifier is a route word', () => {
    const learner = new PathLearner();
    learn(learner, [
      ['DELETE', '/self/calls/133304/hold', null],
      ['DELETE', '/self/conferences/156205/hold', null],
      ['GET', '/self/calls/133304', repo],
      ['GET', '/self/conferences/156205', repo],
    ]);
    expect(learner.resolve(templatePath('/self/calls/17/hold'))).toBe('/self/calls/{callId}/hold');
    expect(learner.resolve(templatePath('/self/conferences/17'))).toBe('/self/conferences/{conferenceId}');
    expect(learner.generation).toBe(0);
  });

  it('learns consecutive names before an identifier, each seen once, from four (/bills/{jurisdiction}/{session}/{id})', () => {
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/bills/peggy/wonka-mobile/30528', repo],
      ['GET', '/bills/frank-blue/heidi-core/146173', repo],
      ['GET', '/bills/ocd-bill/111963', repo],
      ['GET', '/bills/ocd-bill/128675', repo],
    ]);
    // Names all along before an identifier, answering alike: two are what route words look like too.
    expect(learner.resolve(templatePath('/bills/peggy/wonka-mobile/30528'))).toMatch(/^\/bills\/peggy\/wonka-mobile\//);
    learn(learner, [
      ['GET', '/bills/alice/acme-web/2001', repo],
      ['GET', '/bills/bob/cli-x/3002', repo],
    ]);
    expect(learner.resolve(templatePath('/bills/hooli/dave/259653'))).toBe('/bills/{owner}/{bill}/{billId}');
    expect(learner.resolve(templatePath('/bills/ocd-bill/17'))).toBe('/bills/ocd-bill/{ocdBillId}');
  });

  it('keeps action words literal when the bodies they accept differ, with no list of words', () => {
    const learner = new PathLearner();
    const body = (value: object) => responseKeys(inferShape(value));
    learn(learner, [
      ['POST', '/vectors/upsert', body({ upsertedCount: 1 }), body({ vectors: [], namespace: 'n' })],
      ['POST', '/vectors/delete', body({ upsertedCount: 1 }), body({ ids: [], deleteAll: false, namespace: 'n' })],
      ['POST', '/vectors/query', body({ upsertedCount: 1 }), body({ topK: 1, vector: [], filter: {} })],
    ]);
    expect(learner.resolve('/vectors/upsert')).toBe('/vectors/upsert');
    expect(learner.resolve('/vectors/delete')).toBe('/vectors/delete');
    // The same request fields (and answers) make values of them once one is read too, or four are posted to.
    learn(learner, [
      ['POST', '/lists/groceries', body({ id: 1 }), body({ item: 'x', qty: 1 })],
      ['POST', '/lists/chores', body({ id: 2 }), body({ item: 'y', qty: 2 })],
    ]);
    expect(learner.resolve('/lists/todo')).toBe('/lists/todo');
    learn(learner, [['GET', '/lists/chores', body({ id: 2, items: [] })]]);
    expect(learner.resolve('/lists/todo')).toBe('/lists/{list}');
  });

  it('keeps sibling actions that take one body but answer scalars of other kinds literal', () => {
    // zoomconnect.com (held-out 18): `POST /api/rest/v1/messages/analyse/{message-length, message-encoding, …}`.
    const message = responseKeys(inferShape({ message: 'm', recipientNumber: 'r' }));
    const number = responseKeys(inferShape(160));
    const analyse = (
      word: string,
      answer: readonly string[] | null,
    ): [string, string, typeof answer, typeof message] => [
      'POST',
      `/api/rest/v1/messages/analyse/${word}`,
      answer,
      message,
    ];
    const learner = new PathLearner();
    learn(learner, [
      analyse('message-length', number),
      analyse('message-encoding', responseKeys(inferShape('GSM'))),
      analyse('message-length-within-max-allowed', responseKeys(inferShape(true))),
      analyse('message-credit-cost', number),
      analyse('number-of-messages', number),
      analyse('full', responseKeys(inferShape({ messageLength: 1, messageEncoding: 'e', numberOfMessages: 1 }))),
    ]);
    for (const word of ['message-length', 'message-encoding', 'full', 'number-of-messages'])
      expect(learner.resolve(`/api/rest/v1/messages/analyse/${word}`)).toBe(`/api/rest/v1/messages/analyse/${word}`);
    // Values answering one kind are values as before.
    const counts = new PathLearner();
    learn(counts, [
      ['GET', '/counters/alice/total', number],
      ['GET', '/counters/bob/total', number],
    ]);
    expect(counts.resolve('/counters/carol/total')).toBe('/counters/{counter}/total');
  });

  it('keeps two or three sibling actions that take and answer alike literal, and learns four', () => {
    const sent = responseKeys(inferShape({ messageid: 'm', credits: 1 }));
    const message = responseKeys(inferShape({ content: 'c', destination: 'd', schedule: 's' }));
    const batch = responseKeys(inferShape({ batchid: 'b', status: 's', created: 'c' }));
    const learner = new PathLearner();
    learn(learner, [
      ['POST', '/message/send', sent, message],
      ['POST', '/message/flash', sent, message],
      ['POST', '/AuthTokens/Promote', sent, null],
      ['POST', '/AuthTokens/Secondary', sent, null],
      ['DELETE', '/AuthTokens/Secondary', null, null],
    ]);
    expect(learner.resolve('/message/send')).toBe('/message/send');
    expect(learner.resolve('/message/flash')).toBe('/message/flash');
    expect(learner.resolve('/AuthTokens/Secondary')).toBe('/AuthTokens/Secondary');
    learn(learner, [['POST', '/message/schedule', sent, message]]);
    expect(learner.resolve('/message/send')).toBe('/message/send');
    learn(learner, [['POST', '/message/voice', sent, message]]);
    expect(learner.resolve('/message/send')).toBe('/message/{message}');
    // Beside names read alike (`GET /batch/{batch}`), two actions alike with each other only are route words.
    const batches = new PathLearner();
    learn(batches, [
      ['GET', '/batch/alice', batch],
      ['GET', '/batch/bob-infra', batch],
      ['POST', '/batch/send', sent, message],
      ['POST', '/batch/schedule', sent, message],
    ]);
    expect(batches.resolve('/batch/carol')).toBe('/batch/{batch}');
    expect(batches.resolve('/batch/send')).toBe('/batch/send');
    expect(batches.resolve('/batch/schedule')).toBe('/batch/schedule');
    // A value posted to and compared with no other is a value of a learned position as before: no name leaves for it.
    const names = new PathLearner();
    learn(names, [
      ['GET', '/batch/alice', batch],
      ['GET', '/batch/bob-infra', batch],
      ['POST', '/batch/dave', sent, message],
    ]);
    expect(names.resolve('/batch/dave')).toBe('/batch/{batch}');
  });

  it('learns two positions of names with nothing to compare from four values, not from three', () => {
    const learner = new PathLearner();
    const pairs = [
      ['alice', 'stark-cli'],
      ['frank', 'grace'],
      ['acme-river', 'carol'],
    ];
    learn(
      learner,
      pairs.map(([origin, destination]) => ['GET', `/ond/route/${origin}/${destination}`, null] as const),
    );
    expect(learner.resolve('/ond/route/heidi/globex')).toBe('/ond/route/heidi/globex');
    learn(learner, [['GET', '/ond/route/dave-cli/wonka', null]]);
    expect(learner.resolve('/ond/route/heidi/globex')).toBe('/ond/route/{owner}/{route}');
  });

  it('takes values with nothing to compare whose query names disagree for route words (/offers/fares/fares)', () => {
    const learner = new PathLearner();
    /** As the agent does: each request's query names noted first, each distinct observation taken once. */
    const send = (raw: string, query: readonly string[] = []) => {
      const template = templatePath(raw);
      const changed = learner.noteQuery(template, query);
      learner.observe(template, 'GET', null);
      return changed;
    };
    // Routes of one API take query names of their own: three alike are too few for a parameter.
    send('/offers/fares/allfares', ['catalogues', 'destination', 'origin', 'travel-date']);
    send('/offers/fares/bestfares', ['catalogues', 'destination', 'origin', 'range', 'trip-duration']);
    send('/offers/fares/lowestfares', ['catalogues', 'destination', 'origin', 'travelers']);
    send('/offers/fares/fares', ['carriers', 'catalogues', 'segments']);
    send('/offers/fares/subscriptions', ['email', 'lang', 'origin']);
    expect(learner.resolve('/offers/fares/fares')).toBe('/offers/fares/fares');
    expect(learner.resolve('/offers/fares/allfares')).toBe('/offers/fares/allfares');
    // Requested again and again with the same text, names still decide: four values with nothing to compare
    // and no query names against them make a parameter, repeated or not (a CI run's fixtures), so no name leaves.
    for (let i = 0; i < 3; i++)
      for (const name of ['alice', 'bob-infra', 'Carol74', 'dave-cli'])
        send(`/users/${name}`, i === 0 ? ['expand'] : []);
    expect(learner.resolve('/users/erin')).toBe('/users/{user}');
    // A position learned so is forgotten when later query names show its values routes of their own.
    for (const name of ['alice', 'bob-infra', 'Carol74', 'dave-cli']) send(`/ond/route/${name}`);
    expect(learner.resolve('/ond/route/erin')).toBe('/ond/route/{route}');
    const revision = learner.revision;
    expect(send('/ond/route/alice', ['carriers', 'segments'])).toBe(false);
    expect(learner.resolve('/ond/route/erin')).toBe('/ond/route/{route}');
    // A second one read again with names the first never took: both are routes of their own (see
    // `readAgainWithNames`), and the two others are too few for the position.
    expect(send('/ond/route/bob-infra', ['email', 'lang'])).toBe(true);
    expect(learner.revision).toBeGreaterThan(revision);
    expect(learner.resolve('/ond/route/erin')).toBe('/ond/route/erin');
    // Answers with fields to compare still decide, whatever the query names.
    learner.noteQuery('/members/alice', ['a', 'b']);
    learner.noteQuery('/members/bob', ['c', 'd']);
    learner.observe('/members/alice', 'GET', user('alice'));
    learner.observe('/members/bob', 'GET', user('bob'));
    expect(learner.resolve('/members/carol')).toBe('/members/{member}');
  });

  it('takes names that recur among many values for values, not route words (/project/{owner}/{project})', () => {
    const learner = new PathLearner();
    const key = responseKeys(inferShape({ public_key: 'k', type: 't', preferred: true }));
    const vars = responseKeys(inferShape([{ name: 'n', value: 'v' }]));
    // Repositories of many owners, a few names recurring (as `cyberdyne` or `web` do) among twenty seen once,
    // and one recurring name also an owner: after three owners each, and beside a sibling, yet values.
    const pool = ['acme', 'globex', 'initech', 'hooli'];
    const traffic: Array<[string, string, readonly string[] | null]> = [];
    for (let i = 0; i < 20; i++)
      traffic.push(['GET', `/project/owner-${i}/repo-${'abcdefghijklmnopqrst'[i]}x/checkout-key`, key]);
    for (let i = 0; i < 12; i++) traffic.push(['GET', `/project/team-${i}/${pool[i % 4]}/envvar`, vars]);
    traffic.push(['GET', '/project/acme/repo-ax/envvar', vars]);
    learn(learner, traffic);
    expect(learner.resolve('/project/team-1/globex/envvar')).toBe('/project/{owner}/{project}/envvar');
    expect(learner.resolve('/project/acme/initech/checkout-key')).toBe('/project/{owner}/{project}/checkout-key');
    // Route words recur after every value they follow, and there are few of them: they stay words.
    const ships = new PathLearner();
    const nav = responseKeys(inferShape({ status: 's', route: { departure: 'd' } }));
    learn(
      ships,
      Array.from({ length: 30 }, (_, i) => [
        'GET',
        `/my/ships/ship-${'abcdefghijklmnopqrstuvwxyzabcd'[i]}${i}x/nav`,
        nav,
      ]),
    );
    for (const word of ['dock', 'orbit', 'refuel'])
      learn(
        ships,
        [0, 1, 2].map((i) => ['POST', `/my/ships/ship-${'abc'[i]}${i}x/${word}`, nav] as const),
      );
    expect(ships.resolve('/my/ships/ship-z9x/dock')).toBe('/my/ships/{ship}/dock');
  });

  it('takes names that recur after three values each, up to one in three of many, for values (/analyses/{owner}/{analysis})', () => {
    // botify.com's `/analyses/{username}/{project_slug}/{analysis_slug}` (held-out 15): names drawn from a few dozen recur
    // more as traffic grows (28 of 111 after 187 requests); more than one in four recurring kept them route words.
    const learner = new PathLearner();
    const report = responseKeys(inferShape({ crawled: 1, urls: 2, depth: 3 }));
    const pool = ['acme', 'globex', 'initech', 'hooli', 'stark', 'wonka'];
    const traffic: Array<[string, string, readonly string[] | null]> = [];
    for (let i = 0; i < 14; i++)
      traffic.push(['GET', `/analyses/owner-${i}x/repo-${'abcdefghijklmn'[i]}x/report`, report]);
    // Six of twenty recurring, each after three owners.
    for (let j = 0; j < 18; j++)
      traffic.push(['GET', `/analyses/team-${'abcdefghijklmnopqr'[j]}x/${pool[j % 6]}/report`, report]);
    learn(learner, traffic);
    expect(learner.resolve('/analyses/team-bx/globex/report')).toBe('/analyses/{owner}/{analysis}/report');
    expect(learner.resolve('/analyses/owner-3x/repo-dx/report')).toBe('/analyses/{owner}/{analysis}/report');
  });

  it('learns names after identifiers with nothing to compare from four, each after other identifier values', () => {
    const learner = new PathLearner();
    const see = (raw: string) => answeredNothing(learner, 'GET', raw);
    // Four words after one order: what one resource's routes look like; they stay literal.
    for (const word of ['lines', 'notes', 'history', 'status']) see(`/orders/100/${word}`);
    expect(learner.resolve(templatePath('/orders/100/lines'))).toBe('/orders/{orderId}/lines');
    // Three names, each after another order, are not enough; four are.
    see('/orders/101/alice');
    see('/orders/102/bob-infra');
    see('/orders/103/Carol74');
    expect(learner.resolve(templatePath('/orders/104/dave'))).toBe('/orders/{orderId}/dave');
    see('/orders/104/dave');
    expect(learner.resolve(templatePath('/orders/105/erin'))).toBe('/orders/{orderId}/{order}');
  });

  it('learns names after a route word from four alike values, whatever order they come in', () => {
    const message = responseKeys(inferShape({ batchid: 'b', content: 'c', created: 'c' }));
    const scheduled = responseKeys(inferShape({ batch: true, id: 'i', message: { content: 'c' } }));
    const deleted = responseKeys(inferShape({ messageid: 'm', status: 's' }));
    const traffic: Array<[string, string, readonly string[] | null]> = [
      ['GET', '/messages/alice', message],
      ['GET', '/messages/bob-infra', message],
      // `schedule` answers other fields: a route word, and the names after it are learned apart.
      ['GET', '/messages/schedule', scheduled],
      ['DELETE', '/messages/schedule/carol', deleted],
      ['DELETE', '/messages/schedule/dave', deleted],
      ['DELETE', '/messages/schedule/erin', deleted],
      ['DELETE', '/messages/schedule/frank', deleted],
    ];
    const probes = ['/messages/zoe', '/messages/schedule', '/messages/schedule/zoe'];
    const templates = (order: ReadonlyArray<[string, string, readonly string[] | null]>) => {
      const learner = new PathLearner();
      learn(learner, [...order]);
      return probes.map((probe) => learner.resolve(probe));
    };
    expect(templates(traffic)).toEqual(['/messages/{message}', '/messages/schedule', '/messages/schedule/{schedule}']);
    fc.assert(
      fc.property(fc.shuffledSubarray(traffic, { minLength: traffic.length }), (order) => {
        expect(templates(order)).toEqual(templates(traffic));
      }),
      { numRuns: 100 },
    );
    // Two names after it are not enough.
    expect(templates(traffic.slice(0, 5))).toEqual([
      '/messages/{message}',
      '/messages/schedule',
      '/messages/schedule/zoe',
    ]);
  });

  it('keeps the leaf words of a route literal once each ends paths two after three values (/landlord/document)', () => {
    const customers = ['acme', 'erin-web', 'Ivan42', 'bob', 'carol-data', 'dave', 'frank', 'grace'];
    const words = ['document', 'inventory', 'invoice', 'sas', 'tenancyagreement'];
    const summary = responseKeys(inferShape({ AccountBalance: 1, LastPayment: 'd', Owner: 'o' }));
    // Each word of the route answers nothing to compare, for three customers each; the customers answer alike.
    const traffic: Array<[string, string, readonly string[] | null]> = [
      ...customers.map((customer): [string, string, readonly string[] | null] => [
        'GET',
        `/v2/customer/${customer}/landlord/summary`,
        summary,
      ]),
      ...words.flatMap((word, w) =>
        [0, 1, 2].map((k): [string, string, readonly string[] | null] => [
          'GET',
          `/v2/customer/${customers[(w + k * 3) % customers.length]!}/landlord/${word}`,
          null,
        ]),
      ),
    ];
    const probes = words.map((word) => `/v2/customer/zoe/landlord/${word}`);
    const templates = (order: ReadonlyArray<[string, string, readonly string[] | null]>) => {
      const learner = new PathLearner();
      learn(learner, [...order]);
      return probes.map((probe) => learner.resolve(probe));
    };
    expect(templates(traffic)).toEqual(words.map((word) => `/v2/customer/{customer}/landlord/${word}`));
    fc.assert(
      fc.property(fc.shuffledSubarray(traffic, { minLength: traffic.length }), (order) => {
        expect(templates(order)).toEqual(templates(traffic));
      }),
      { numRuns: 50 },
    );
    // Two positions after identifiers the same (`/projects/{projectId}/images/tagged`), counted as digests.
    const learner = new PathLearner();
    for (const word of ['tagged', 'untagged', 'id', 'regions'])
      for (const id of [101, 202, 303]) {
        const raw = `/projects/${id + word.length}/images/${word}`;
        learner.observe(templatePath(raw), 'GET', null);
        learner.noteIdentifiers(templatePath(raw), raw);
      }
    expect(learner.resolve(templatePath('/projects/999/images/tagged'))).toBe('/projects/{projectId}/images/tagged');
    // Names there, each after one value, are still values: four make a parameter.
    const names = new PathLearner();
    learn(names, [
      ...traffic.slice(0, customers.length),
      ...['alice', 'bob-infra', 'Carol74', 'dave'].map((name, k): [string, string, readonly string[] | null] => [
        'GET',
        `/v2/customer/${customers[k]!}/landlord/${name}`,
        null,
      ]),
    ]);
    expect(names.resolve('/v2/customer/zoe/landlord/erin')).toBe('/v2/customer/{customer}/landlord/{landlord}');
  });

  it('keeps a word beside identifiers literal whatever follows it, and what follows it too', () => {
    const learner = new PathLearner();
    const article = responseKeys(inferShape({ id: 1, title: 't', body: 'b' }));
    const articles = list({ id: 1, title: 't', body: 'b' });
    learn(learner, [
      ['GET', '/articles/17', article],
      ['GET', '/articles/18', article],
      ['GET', '/articles/latest', articles],
      ['GET', '/articles/me', articles],
      ['GET', '/articles/me/all', articles],
      ['GET', '/articles/me/published', articles],
      ['GET', '/articles/me/unpublished', articles],
      ['GET', '/articles/alice/my-first-post', article],
      ['GET', '/articles/bob/hello-world', article],
      ['PUT', '/articles/17/unpublish', article],
    ]);
    expect(learner.resolve('/articles/latest')).toBe('/articles/latest');
    expect(learner.resolve('/articles/me/all')).toBe('/articles/me/all');
    expect(learner.resolve('/articles/me/published')).toBe('/articles/me/published');
    expect(learner.resolve(templatePath('/articles/carol/intro'))).toBe('/articles/{owner}/{article}');
    expect(learner.resolve(templatePath('/articles/19/unpublish'))).toBe('/articles/{articleId}/unpublish');
  });

  it('learns the same templates whatever order the same traffic comes in', () => {
    const article = responseKeys(inferShape({ id: 1, title: 't', body: 'b' }));
    const articles = list({ id: 1, title: 't', body: 'b' });
    const org = responseKeys(inferShape({ login: 'o', id: 1, members: 3 }));
    const traffic: Array<[string, string, readonly string[] | null]> = [
      ['GET', '/articles/17', article],
      ['GET', '/articles/latest', articles],
      ['GET', '/articles/me', articles],
      ['GET', '/articles/me/all', articles],
      ['GET', '/articles/me/published', articles],
      ['GET', '/articles/alice/my-first-post', article],
      ['GET', '/articles/bob/hello-world', article],
      ['GET', '/articles/carol/hello-world', article],
      ['GET', '/users/alice', user('alice')],
      ['GET', '/users/bob', user('bob')],
      ['GET', '/users/me', responseKeys(inferShape({ plan: 'pro', email: 'e', quota: 1 }))],
      ['GET', '/orgs/acme', org],
      ['GET', '/orgs/acme/members', list({ login: 'x' })],
      ['GET', '/orgs/initech/members', list({ login: 'x' })],
      ['GET', '/orgs/initech/repos', list({ name: 'x', stars: 1 })],
      ['GET', '/repos/dave/web/issues', list({ number: 1 })],
      ['GET', '/repos/erin/cli/issues', list({ number: 1 })],
      ['GET', '/repos/erin/cli/pulls', list({ number: 1, head: 'h' })],
      ['GET', '/self/calls', list({ id: 1 })],
      ['GET', '/self/calls/17', responseKeys(inferShape({ id: 1 }))],
      ['GET', '/self/calls/count', null],
      ['GET', '/self/events/count', null],
      ['GET', '/self/account', responseKeys(inferShape({ id: 1, name: 'n' }))],
      ['GET', '/json/Teams', list({ TeamId: 1 })],
      ['GET', '/xml/Teams', list({ TeamId: 1 })],
      ['GET', '/json/Venues', list({ VenueId: 1 })],
      ['GET', '/xml/Venues', list({ VenueId: 1 })],
      ['GET', '/v1/company/id/17', org],
      ['GET', '/v1/company/competitor/id/18', list({ login: 'x' })],
      ['GET', '/v1/company/rival/id/19', list({ login: 'x' })],
    ];
    const probes = [
      '/articles/latest',
      '/articles/me/all',
      '/articles/zoe/post',
      '/users/me',
      '/users/zoe',
      '/orgs/zoe/members',
      '/repos/zoe/app/issues',
      '/self/account',
      '/self/calls/count',
      '/csv/Teams',
      '/xml/Venues',
      '/v1/company/rival/id/20',
    ];
    const templates = (order: ReadonlyArray<[string, string, readonly string[] | null]>) => {
      const learner = new PathLearner();
      learn(learner, [...order]);
      return probes.map((probe) => learner.resolve(templatePath(probe)));
    };
    const expected = templates(traffic);
    expect(expected).toEqual([
      '/articles/latest',
      '/articles/me/all',
      '/articles/{owner}/{article}',
      '/users/me',
      '/users/{user}',
      '/orgs/{org}/members',
      '/repos/{owner}/{repo}/issues',
      '/self/account',
      '/self/calls/count',
      '/csv/Teams',
      '/{name}/Venues',
      '/v1/company/rival/id/{idId}',
    ]);
    fc.assert(
      fc.property(fc.shuffledSubarray(traffic, { minLength: traffic.length }), (order) => {
        expect(templates(order)).toEqual(expected);
      }),
      { numRuns: 200 },
    );
  });

  it('learns a position of many leaf values with nothing to compare, but not of three', () => {
    const learner = new PathLearner();
    learn(learner, [
      ['POST', '/v0/data/alice', null],
      ['POST', '/v0/data/bob', null],
      ['POST', '/v0/data/carol', null],
    ]);
    expect(learner.resolve('/v0/data/alice')).toBe('/v0/data/alice');
    learn(learner, [['POST', '/v0/data/dave', null]]);
    expect(learner.resolve('/v0/data/erin')).toBe('/v0/data/{data}');
  });

  it('learns a name followed by a slug when the answers agree', () => {
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/articles/erin/initech-payments', repo],
      ['GET', '/articles/judy/dave', repo],
    ]);
    expect(learner.resolve('/articles/walter/tyrell')).toBe('/articles/{owner}/{article}');
  });

  it('learns slugs from a shared literal continuation with no bodies at all', () => {
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/orgs/bob-infra/actions/cache/usage', null],
      ['GET', '/orgs/acme/actions/cache/usage', null],
    ]);
    expect(learner.resolve('/orgs/zeta/actions/cache/usage')).toBe('/orgs/{org}/actions/cache/usage');
  });

  it('learns a first segment from values that share whole routes, and only those values', () => {
    const learner = new PathLearner();
    const teams = list({ TeamId: 1, Name: 'n' });
    const players = list({ PlayerId: 1, MatchName: 'm' });
    learn(learner, [
      ['GET', '/json/Teams', teams],
      ['GET', '/xml/Teams', teams],
      ['GET', '/health', responseKeys(inferShape({ ok: true }))],
      ['GET', '/users/alice', user('alice')],
      ['GET', '/orgs/alice', user('alice')],
      ['GET', '/users/bob', user('bob')],
    ]);
    // One shared route is not enough where names live.
    expect(learner.resolve('/json/Teams')).toBe('/json/Teams');
    learn(learner, [
      ['GET', '/json/Players', players],
      ['GET', '/xml/Players', players],
      ['GET', '/xml/Player/alice', user('alice')],
      ['GET', '/json/Player/bob', user('bob')],
    ]);
    expect(learner.resolve('/json/Teams')).toBe('/{name}/Teams');
    expect(learner.resolve('/xml/Players')).toBe('/{name}/Players');
    // Route words after its values stay literal; names after them are values.
    expect(learner.resolve('/json/Player/carol')).toBe('/{name}/Player/{player}');
    // Other first segments keep their text: a scanner's path, /health, collections.
    expect(learner.resolve('/health')).toBe('/health');
    expect(learner.resolve('/wp-admin/setup-config.php')).toBe('/wp-admin/setup-config.php');
    expect(learner.resolve('/users/bob')).toBe('/users/{user}');
  });

  it('makes a first-segment value seen only before identifiers a value where one shown alike was seen so too', () => {
    // adafruit.com (held-out 20): `/{username}/dashboards/{dashboard_id}/blocks/{id}`; a username sent once, to a
    // block, went out by its name (`/Dave32/dashboards/{dashboardId}/blocks/{blockId}`).
    const feeds = list({ key: 'k', name: 'n', last_value: 'v' });
    const tokens = list({ id: 1, token: 't' });
    const block = responseKeys(inferShape({ id: 1, name: 'n', visual_type: 'v', column: 1, row: 2 }));
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/alice/feeds', feeds],
      ['GET', '/bob-infra/feeds', feeds],
      ['GET', '/alice/tokens', tokens],
      ['GET', '/bob-infra/tokens', tokens],
      ['PATCH', '/bob-infra/dashboards/12962/blocks/810636', block],
      ['PATCH', '/Dave32/dashboards/57906/blocks/841215', block],
      ['PATCH', '/admin/dashboards/4/blocks/5', responseKeys(inferShape({ error: 'e', status: 1 }))],
    ]);
    expect(learner.resolve('/alice/feeds')).toBe('/{name}/feeds');
    expect(learner.resolve(templatePath('/Dave32/dashboards/57906/blocks/841215'))).toBe(
      '/{name}/dashboards/{dashboardId}/blocks/{blockId}',
    );
    // Answering other fields there, a first segment keeps its text.
    expect(learner.resolve(templatePath('/admin/dashboards/4/blocks/5'))).toBe(
      '/admin/dashboards/{dashboardId}/blocks/{blockId}',
    );
  });

  it('pairs no first-segment values on a whole route a collection leads to too', () => {
    // e-conomic.com (held-out 18): sibling resources share their routes (`/projects/paged`, `/employees/paged`).
    const projects = list({ number: 1, name: 'n', objectVersion: 'v', costPrice: 1, customerNumber: 2 });
    const customers = list({ number: 1, name: 'n', objectVersion: 'v' });
    const traffic: Array<[string, string, readonly string[] | null]> = [
      ['GET', '/projects/paged', projects],
      ['GET', '/project-customers/paged', customers],
      ['GET', '/projects/count', null],
      ['GET', '/project-customers/count', null],
    ];
    const alone = new PathLearner();
    learn(alone, traffic);
    // Without a collection beside them, two shared routes with answers alike are what values look like.
    expect(alone.resolve('/projects/paged')).toBe('/{name}/paged');
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/employees/17', user('e')],
      ['GET', '/employees/count', null],
      ['GET', '/employees/paged', list({ number: 1, name: 'n', objectVersion: 'v', email: 'e' })],
      ...traffic,
    ]);
    expect(learner.resolve('/projects/paged')).toBe('/projects/paged');
    expect(learner.resolve('/project-customers/count')).toBe('/project-customers/count');
  });

  it('learns an enumerated first segment before the routes an API serves under each (/{dialect}/api/where/…)', () => {
    const envelope = (data: object, more: object = {}) =>
      responseKeys(inferShape({ code: 200, currentTime: 1, data: { references: {}, ...data }, ...more }));
    const full = envelope(
      { class: 'c', limitExceeded: false, list: [{ id: 1 }] },
      { status: 'OK', text: 't', version: 2 },
    );
    const routes = ['search', 'statistics', 'trip-details', 'route-details', 'vehicles-for-stop'];
    const traffic: Array<[string, string, readonly string[] | null]> = [
      ...routes.flatMap((route): Array<[string, string, readonly string[] | null]> => [
        ['GET', `/otp/api/where/${route}`, full],
        ['GET', `/mobile/api/where/${route}`, full],
      ]),
      // Answers that left other optional fields out disagree on one route (fewer than half of those shared).
      ['GET', '/otp/api/where/search', envelope({ entry: {}, limitExceeded: false })],
      ['GET', '/mobile/api/where/search', envelope({ class: 'c', entry: {} }, { status: 'OK', text: 't', version: 2 })],
      // Routes served under one value only, answering the same envelope.
      ['GET', '/mobile/api/where/plan-trip', full],
      ['GET', '/mobile/api/where/metadata', full],
    ];
    const probes = ['/otp/api/where/search', '/mobile/api/where/plan-trip', '/bkk/api/where/metadata'];
    const templates = (order: ReadonlyArray<[string, string, readonly string[] | null]>) => {
      const learner = new PathLearner();
      learn(learner, [...order]);
      return probes.map((probe) => learner.resolve(templatePath(probe)));
    };
    // Before: `/otp/api/where/{where}` (every route answers one envelope), so the two values shared no whole route.
    expect(templates(traffic)).toEqual([
      '/{name}/api/where/search',
      '/{name}/api/where/plan-trip',
      '/bkk/api/where/metadata',
    ]);
    fc.assert(
      fc.property(fc.shuffledSubarray(traffic, { minLength: traffic.length }), (order) => {
        expect(templates(order)).toEqual(templates(traffic));
      }),
      { numRuns: 50 },
    );
    // The few values of an enumerated position shared under two first segments stay values (`/{name}/templates/{…}`).
    const learner = new PathLearner();
    const template = responseKeys(inferShape({ name: 'n', fields: [{ id: 1 }] }));
    learn(learner, [
      ['GET', '/catalog/templates/basic', template],
      ['GET', '/catalog/templates/extra', template],
      ['GET', '/monitoring/templates/basic', template],
      ['GET', '/monitoring/templates/extra', template],
      ['GET', '/catalog/templates/interop', template],
    ]);
    expect(learner.resolve('/catalog/templates/interop')).toBe('/{name}/templates/{template}');
  });

  it('keeps a collection literal whose children answer the items it lists, beside lists of others (/nh/fish/{fish})', () => {
    const critter = { name: 'n', price: 1, location: 'l', catchphrases: ['c'] };
    const garment = { name: 'n', variations: ['v'], seasons: ['s'], styles: ['s'] };
    const traffic: Array<[string, string, readonly string[] | null]> = [
      ['GET', '/nh/fish', list(critter)],
      ['GET', '/nh/bugs', list(critter)],
      ['GET', '/nh/sea', list(critter)],
      ['GET', '/nh/clothing', list(garment)],
      ['GET', '/nh/fish/trent', responseKeys(inferShape(critter))],
      ['GET', '/nh/fish/acme', responseKeys(inferShape(critter))],
      ['GET', '/nh/bugs/dave', responseKeys(inferShape(critter))],
      ['GET', '/nh/bugs/peggy', responseKeys(inferShape(critter))],
      ['GET', '/nh/sea/bob', responseKeys(inferShape(critter))],
      ['GET', '/nh/clothing/hooli', responseKeys(inferShape(garment))],
      ['GET', '/nh/clothing/wonka', responseKeys(inferShape(garment))],
    ];
    const probes = ['/nh/fish/zoe', '/nh/bugs', '/nh/sea', '/nh/clothing/ivan'];
    const templates = (order: ReadonlyArray<[string, string, readonly string[] | null]>) => {
      const learner = new PathLearner();
      learn(learner, [...order]);
      return probes.map((probe) => learner.resolve(templatePath(probe)));
    };
    // Before: `/nh/{nh}` (the critters' lists alike), then `/nh/{owner}/{nh}`.
    expect(templates(traffic)).toEqual(['/nh/fish/{fish}', '/nh/bugs', '/nh/sea', '/nh/clothing/{clothing}']);
    fc.assert(
      fc.property(fc.shuffledSubarray(traffic, { minLength: traffic.length }), (order) => {
        expect(templates(order)).toEqual(templates(traffic));
      }),
      { numRuns: 50 },
    );
    // The values of one position list items of one kind: no collections for this.
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/repositories/alice', list({ name: 'web', stars: 1, private: false })],
      ['GET', '/repositories/bob', list({ name: 'web', stars: 1, private: false })],
      ['GET', '/repositories/alice/web', responseKeys(inferShape({ name: 'web', stars: 1, private: false }))],
      ['GET', '/repositories/bob/cli', responseKeys(inferShape({ name: 'web', stars: 1, private: false }))],
    ]);
    expect(learner.resolve('/repositories/carol')).toBe('/repositories/{repository}');
  });

  it('keeps a qualifier literal when its routes mirror its siblings (/company/competitor/id/17)', () => {
    const learner = new PathLearner();
    const company = responseKeys(inferShape({ company_id: 1, name: 'n', ceo: 'c' }));
    learn(learner, [
      ['GET', '/v1/company/id/17', company],
      ['GET', '/v1/company/url/alice', company],
      ['GET', '/v1/company/url/bob', company],
      ['GET', '/v1/company/competitor/id/18', responseKeys(inferShape({ competitor: [] }))],
      ['GET', '/v1/company/competitor/url/carol', responseKeys(inferShape({ competitor: [] }))],
      ['GET', '/v1/company/competitorpremium/id/19', responseKeys(inferShape({ competitor: [], page: 1 }))],
      ['GET', '/v1/company/competitorpremium/url/dave', responseKeys(inferShape({ competitor: [], page: 1 }))],
      ['GET', '/v1/company/competitorpremium/url/erin', responseKeys(inferShape({ competitor: [], page: 1 }))],
    ]);
    expect(learner.resolve(templatePath('/v1/company/competitor/id/20'))).toBe('/v1/company/competitor/id/{idId}');
    expect(learner.resolve('/v1/company/competitorpremium/url/zoe')).toBe('/v1/company/competitorpremium/url/{url}');
    expect(learner.resolve('/v1/company/url/zoe')).toBe('/v1/company/url/{url}');
  });

  it('takes a name ending paths after three values past other words for a value (/images/{image}/metadata/initech)', () => {
    // anchore.io (held-out 21): `initech` drawn for `/images/{imageDigest}/metadata/{mtype}`, `…/content/{ctype}` and
    // `/system/services/{servicename}/{hostid}` after other images and services: no word of one route.
    const image = list({ imageDigest: 'd', analysis_status: 's', image_status: 's' });
    const metadata = responseKeys(inferShape({ imageDigest: 'd', metadata_type: 't', metadata: {} }));
    const content = responseKeys(inferShape({ imageDigest: 'd', content_type: 't', content: [{ package: 'p' }] }));
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/images/acme', image],
      ['GET', '/images/bob', image],
      ['GET', '/images/acme-docs/metadata/initech', metadata],
      ['GET', '/images/carol/content/initech', content],
      ['GET', '/images/dave/content/oscar', content],
      ['GET', '/images/erin/metadata/initech', metadata],
      ['GET', '/images/frank/metadata/wonka', metadata],
      ['GET', '/images/grace/metadata/globex', metadata],
      ['GET', '/images/heidi/metadata/hooli', metadata],
      ['GET', '/images/ivan/metadata/stark-web', metadata],
    ]);
    expect(learner.resolve('/images/acme-docs/metadata/initech')).toBe('/images/{image}/metadata/{metadata}');
    // After one word, three values make it a leaf word, as before (`document` of `/customer/acme/landlord/document`).
    const leaf = new PathLearner();
    learn(leaf, [
      ['GET', '/images/acme', image],
      ['GET', '/images/bob', image],
      ['GET', '/images/acme-docs/metadata/native', metadata],
      ['GET', '/images/carol/metadata/native', metadata],
      ['GET', '/images/erin/metadata/native', metadata],
      ['GET', '/images/frank/metadata/wonka', metadata],
      ['GET', '/images/grace/metadata/globex', metadata],
      ['GET', '/images/heidi/metadata/hooli', metadata],
      ['GET', '/images/ivan/metadata/stark-web', metadata],
    ]);
    expect(leaf.resolve('/images/acme-docs/metadata/native')).toBe('/images/{image}/metadata/native');
  });

  it('takes four qualifiers of one mirrored word for values (/techniques/17/alice/directives)', () => {
    // rudder.example.local (held-out 21): `/techniques/{techniqueId}/directives` beside
    // `/techniques/{techniqueId}/{techniqueVersion}/directives`, a version name of each technique.
    const directives = responseKeys(inferShape({ action: 'a', result: 'r', data: { directives: [] } }));
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/techniques/104248/directives', directives],
      ['GET', '/techniques/213386/directives', directives],
      ['GET', '/techniques/140374/frank/directives', directives],
      ['GET', '/techniques/205976/wayne/directives', directives],
      ['GET', '/techniques/256522/tyrell/directives', directives],
      ['GET', '/techniques/661290/initech-search/directives', directives],
      ['GET', '/techniques/867218/hooli/directives', directives],
    ]);
    expect(learner.resolve(templatePath('/techniques/913544/dave/directives'))).toBe(
      '/techniques/{techniqueId}/{technique}/directives',
    );
    expect(learner.resolve(templatePath('/techniques/205976/wayne/directives'))).toBe(
      '/techniques/{techniqueId}/{technique}/directives',
    );
    expect(learner.resolve(templatePath('/techniques/31929/directives'))).toBe('/techniques/{techniqueId}/directives');
    // Three are what a route's qualifiers look like: route words, as before.
    const few = new PathLearner();
    learn(few, [
      ['GET', '/techniques/104248/directives', directives],
      ['GET', '/techniques/140374/latest/directives', directives],
      ['GET', '/techniques/205976/draft/directives', directives],
      ['GET', '/techniques/256522/stable/directives', directives],
      ['GET', '/techniques/256523/stable/directives', directives],
    ]);
    expect(few.resolve(templatePath('/techniques/1/latest/directives'))).toBe(
      '/techniques/{techniqueId}/latest/directives',
    );
  });

  it("keeps an identifier's words literal beside it, and their siblings (/racecards/pro, /racecards/2393/pro)", () => {
    // theracingapi.com (held-out 17): five lists of racecards beside `/racecards/{id}/pro`, `…/standard`, all alike.
    const cards = responseKeys(inferShape({ query: [], racecards: [{ race_id: 'r', course: 'c' }] }));
    const card = responseKeys(inferShape({ race_id: 'r', course: 'c', age_band: 'a', big_race: false }));
    const traffic: Array<[string, string, readonly string[] | null]> = [
      ['GET', '/v1/racecards/2393/pro', card],
      ['GET', '/v1/racecards/745467/standard', card],
      ['GET', '/v1/racecards/970396/results', list({ race_id: 'r', date: 'd' })],
      ['GET', '/v1/racecards/free', cards],
      ['GET', '/v1/racecards/basic', cards],
      ['GET', '/v1/racecards/pro', cards],
      ['GET', '/v1/racecards/big-races', cards],
      ['GET', '/v1/racecards/standard', cards],
    ];
    for (const order of [traffic, [...traffic].reverse()]) {
      const learner = new PathLearner();
      learn(learner, order);
      for (const word of ['free', 'basic', 'pro', 'big-races', 'standard'])
        expect(learner.resolve(`/v1/racecards/${word}`)).toBe(`/v1/racecards/${word}`);
      expect(learner.resolve(templatePath('/v1/racecards/17/pro'))).toBe('/v1/racecards/{racecardId}/pro');
    }
    // Names there (none of them a word after the identifiers) are values as before.
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/v1/racecards/2393/pro', card],
      ['GET', '/v1/racecards/alice', cards],
      ['GET', '/v1/racecards/bob', cards],
    ]);
    expect(learner.resolve('/v1/racecards/carol')).toBe('/v1/racecards/{racecard}');
  });

  it('keeps a collection of one parent a route word under the others (/articles/get/17, /journals/get)', () => {
    const learner = new PathLearner();
    const envelope = responseKeys(inferShape([{ status: 'OK', data: {} }]));
    learn(learner, [
      ['GET', '/articles/get/17', repo],
      ['GET', '/articles/search/18', repo],
      ['POST', '/journals/get', envelope, responseKeys(inferShape(['a']))],
      ['POST', '/journals/search', envelope, responseKeys(inferShape([{ query: 'q', page: 1 }]))],
      ['GET', '/journals/get/alice', repo],
      ['GET', '/journals/get/bob', repo],
    ]);
    expect(learner.resolve('/journals/get')).toBe('/journals/get');
    expect(learner.resolve('/journals/search')).toBe('/journals/search');
    expect(learner.resolve('/journals/get/carol')).toBe('/journals/get/{get}');
  });

  it('learns names after a detected identifier from four alike values, not from two', () => {
    const learner = new PathLearner();
    const comments = list({ id: 1, body: 'b', author: 'a' });
    learn(learner, [
      ['GET', '/posts/17/comments', comments],
      ['GET', '/posts/18/likes', comments],
      ['POST', '/snapshots/17/alice', repo],
      ['POST', '/snapshots/18/bob', repo],
      ['POST', '/snapshots/19/carol', repo],
    ]);
    expect(learner.resolve(templatePath('/posts/19/likes'))).toBe('/posts/{postId}/likes');
    expect(learner.resolve(templatePath('/snapshots/20/dave'))).toBe('/snapshots/{snapshotId}/dave');
    learn(learner, [['POST', '/snapshots/20/dave', repo]]);
    expect(learner.resolve(templatePath('/snapshots/21/erin'))).toBe('/snapshots/{snapshotId}/{snapshot}');
    expect(learner.resolve(templatePath('/posts/19/likes'))).toBe('/posts/{postId}/likes');
  });

  it('keeps an action after an identifier literal once it follows three identifier values, however many actions are alike', () => {
    const learner = new PathLearner();
    const done = responseKeys(inferShape({ status: 's', at: 't' }));
    const actions = ['check_in', 'check_out', 'assign_room', 'pre_authorize'];
    // Each action on three reservations, all answering alike: four alike values after an identifier.
    for (const action of actions)
      for (const id of [101, 202, 303]) {
        const raw = `/reservations/${id + actions.indexOf(action)}/${action}`;
        learner.observe(templatePath(raw), 'POST', done);
        learner.noteIdentifiers(templatePath(raw), raw);
      }
    for (const action of actions)
      expect(learner.resolve(templatePath(`/reservations/999/${action}`))).toBe(
        `/reservations/{reservationId}/${action}`,
      );
    // Names after an identifier, each after one identifier value, still make a parameter from four alike.
    for (const [id, name] of [
      [17, 'alice'],
      [18, 'bob'],
      [19, 'carol'],
      [20, 'dave'],
    ] as const) {
      const raw = `/snapshots/${id}/${name}`;
      learner.observe(templatePath(raw), 'POST', repo);
      learner.noteIdentifiers(templatePath(raw), raw);
    }
    expect(learner.resolve(templatePath('/snapshots/21/erin'))).toBe('/snapshots/{snapshotId}/{snapshot}');
  });

  it('forgets a position learned from actions once they turn out route words after three identifier values', () => {
    const learner = new PathLearner();
    const done = responseKeys(inferShape({ status: 's', at: 't' }));
    const actions = ['check_in', 'check_out', 'assign_room', 'pre_authorize'];
    for (const action of actions) learner.observe(templatePath(`/reservations/1/${action}`), 'POST', done);
    // Learned from four alike values before their identifier values were counted.
    expect(learner.resolve(templatePath('/reservations/1/check_in'))).toBe(
      '/reservations/{reservationId}/{reservation}',
    );
    for (const action of actions)
      for (const id of [1, 2, 3])
        learner.noteIdentifiers(`/reservations/{reservationId}/${action}`, `/reservations/${id}/${action}`);
    expect(learner.resolve(templatePath('/reservations/1/check_in'))).toBe('/reservations/{reservationId}/check_in');
    // Two identifier values are not enough: a name may follow two ids by chance.
    const other = new PathLearner();
    for (const action of actions) other.observe(templatePath(`/reservations/1/${action}`), 'POST', done);
    for (const action of actions)
      for (const id of [1, 2])
        other.noteIdentifiers(`/reservations/{reservationId}/${action}`, `/reservations/${id}/${action}`);
    expect(other.resolve(templatePath('/reservations/1/check_in'))).toBe('/reservations/{reservationId}/{reservation}');
  });

  it('grows its revision when an exception is lost, so what was sent under it is looked at again', () => {
    const learner = new PathLearner();
    const org = responseKeys(inferShape({ name: 'n', summary: 's', url: 'u' }));
    const members = list({ login: 'l', twitter_username: 't' });
    const articles = list({ title: 't', description: 'd', id: 1 });
    learn(learner, [
      ['GET', '/orgs/acme', org],
      ['GET', '/orgs/initech', org],
      ['GET', '/orgs/hooli/users', members],
      ['GET', '/orgs/wonka/articles', articles],
    ]);
    // Its one continuation disagrees with a sibling's and agrees with none: an exception for now.
    expect(learner.resolve('/orgs/wonka/articles')).toBe('/orgs/wonka/articles');
    const before = learner.revision;
    learn(learner, [['GET', '/orgs/stark/articles', articles]]);
    expect(learner.resolve('/orgs/wonka/articles')).toBe('/orgs/{org}/articles');
    expect(learner.revision).toBeGreaterThan(before);
  });

  it('says a template may still change while its first segment may still be learned, and holds neither for it', () => {
    const learner = new PathLearner();
    const teams = list({ TeamId: 1, Name: 'n' });
    const players = list({ PlayerId: 1, Team: 't' });
    learn(learner, [
      ['GET', '/xml/Teams/alice', user('alice')],
      ['GET', '/xml/Teams/bob', user('bob')],
    ]);
    // Learned under `/xml` before `xml` itself: not held for its first segment, but it may change.
    expect(learner.resolve('/xml/Teams/carol')).toBe('/xml/Teams/{team}');
    expect(learner.undecided('/xml/Teams/{team}')).toBe(false);
    expect(learner.changeable('/xml/Teams/{team}')).toBe(true);
    // Right after a version, many alike values may yet learn it: it may change too, but for a collection.
    expect(learner.changeable('/v1/Teams')).toBe(true);
    expect(learner.changeable('/v1/Teams/{team}')).toBe(false);
    // A single first segment may become a value too (`/{blockchain}` beside `/{blockchain}/v2/…`): remembered, not held.
    expect(learner.changeable('/health')).toBe(true);
    expect(learner.undecided('/health')).toBe(false);
    learn(learner, [
      ['GET', '/json/Teams', teams],
      ['GET', '/xml/Teams', teams],
      ['GET', '/json/Players', players],
      ['GET', '/xml/Players', players],
    ]);
    expect(learner.resolve('/xml/Teams/{team}')).toBe('/{name}/Teams/{team}');
    expect(learner.changeable('/api/v2/{id}')).toBe(false);
  });

  it('keeps a value that answers other fields literal beside siblings whose answers were not looked at', () => {
    const learner = new PathLearner();
    const message = responseKeys(inferShape({ batchid: 'b', content: 'c', created: 'd' }));
    learn(learner, [
      ['GET', '/messages/alice', message],
      ['GET', '/messages/bob', message],
      // Sampled out: its answer was not shaped, so there is nothing to compare.
      ['GET', '/messages/carol', null],
      ['GET', '/messages/schedule', responseKeys(inferShape({ batch: true, id: 'i', message: { content: 'c' } }))],
    ]);
    expect(learner.resolve('/messages/schedule')).toBe('/messages/schedule');
    expect(learner.resolve('/messages/carol')).toBe('/messages/{message}');
  });

  it('holds a value seen with a continuation no sibling has, and a value right after a learned one', () => {
    const learner = new PathLearner();
    const message = responseKeys(inferShape({ batchid: 'b', content: 'c', created: 'd' }));
    const deleted = responseKeys(inferShape({ messageid: 'm', status: 's' }));
    learn(learner, [
      ['GET', '/messages/alice', message],
      ['GET', '/messages/bob', message],
      ['DELETE', '/messages/schedule/carol', deleted],
      ['DELETE', '/messages/schedule/dave', deleted],
    ]);
    // `schedule` is a value of `/messages/{message}` by default only: no other value has a segment after it.
    const scheduled = learner.resolve('/messages/schedule/carol');
    expect(scheduled).toBe('/messages/{owner}/{message}');
    expect(learner.undecided(scheduled, '/messages/schedule/carol')).toBe(true);
    expect(learner.undecided('/messages/{message}', '/messages/erin')).toBe(false);
    // Once it answers other fields than its siblings, it is a route word and what follows it is learned apart.
    learn(learner, [
      ['GET', '/messages/schedule', list({ batch: true, id: 'i' })],
      ['DELETE', '/messages/schedule/erin', deleted],
      ['DELETE', '/messages/schedule/frank', deleted],
    ]);
    expect(learner.resolve('/messages/schedule/carol')).toBe('/messages/schedule/{schedule}');
    expect(learner.resolve('/messages/schedule')).toBe('/messages/schedule');

    // Right after a learned value, route words show themselves only as they recur after other values.
    const ships = new PathLearner();
    const answer = responseKeys(inferShape({ data: { cooldown: 1, symbol: 's' } }));
    learn(ships, [
      ['GET', '/my/ships/alice/cargo', answer],
      ['GET', '/my/ships/bob/nav', answer],
    ]);
    const charted = ships.resolve('/my/ships/alice/cargo');
    expect(charted).toBe('/my/ships/{owner}/{ship}');
    expect(ships.undecided(charted, '/my/ships/alice/cargo')).toBe(true);
    expect(ships.undecided(charted)).toBe(false);
  });

  it('keeps a word seen after three values literal, however many values there are (/my/ships/{ship}/dock)', () => {
    const learner = new PathLearner();
    const nav = responseKeys(inferShape({ data: { nav: { status: 's' } } }));
    const ship = responseKeys(inferShape({ data: { symbol: 's', cargo: {} } }));
    const ships = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan'];
    learn(learner, [
      ...ships.map((name): [string, string, readonly string[] | null] => ['GET', `/my/ships/${name}`, ship]),
      ['POST', '/my/ships/alice/dock', nav],
      ['POST', '/my/ships/bob/dock', nav],
      ['POST', '/my/ships/carol/dock', nav],
      ['POST', '/my/ships/dave/orbit', nav],
      ['POST', '/my/ships/erin/orbit', nav],
      ['POST', '/my/ships/frank/orbit', nav],
    ]);
    expect(learner.resolve('/my/ships/zoe/dock')).toBe('/my/ships/{ship}/dock');
    expect(learner.resolve('/my/ships/zoe/orbit')).toBe('/my/ships/{ship}/orbit');
  });

  it('takes a name seen under three collections for a value of each, not a route word (/manage/screens/{screen})', () => {
    // gamesparks.net's `/restv2/game/{apiKey}/manage/{screens,snippets,queries}/{shortCode}` (held-out 19): names drawn
    // from a few dozen recur under the collections, which are route words themselves (each ends paths two positions after
    // three games). Counted as three values before it, `heidi` was a route word and went out as it is.
    const learner = new PathLearner();
    const item = { name: 'n', shortCode: 's', groups: ['g'] };
    const games = ['acme', 'bob-core', 'carol', 'dave-docs', 'erin', 'frank'];
    const collections = ['screens', 'snippets', 'queries'];
    const names = ['alice-cli', 'Bob18', 'globex', 'heidi', 'ivan-mobile', 'judy', 'mallory-core', 'oscar'];
    learn(learner, [
      ...games.flatMap((game) =>
        collections.map((collection): [string, string, readonly string[] | null] => [
          'GET',
          `/game/${game}/manage/${collection}`,
          list(item),
        ]),
      ),
      ...collections.flatMap((collection, c) =>
        games
          .slice(0, 4)
          .map((game, k): [string, string, readonly string[] | null] => [
            'GET',
            `/game/${game}/manage/${collection}/${names[(c * 4 + k) % names.length]}`,
            responseKeys(inferShape(item)),
          ]),
      ),
      ...collections.map((collection): [string, string, readonly string[] | null] => [
        'GET',
        `/game/frank/manage/${collection}/heidi`,
        responseKeys(inferShape(item)),
      ]),
    ]);
    const singular = { screens: 'screen', snippets: 'snippet', queries: 'query' };
    for (const collection of collections) {
      const template = `/game/{game}/manage/${collection}/{${singular[collection as keyof typeof singular]}}`;
      expect(learner.resolve(templatePath(`/game/zoe/manage/${collection}/heidi`))).toBe(template);
      expect(learner.resolve(templatePath(`/game/zoe/manage/${collection}/wonka`))).toBe(template);
    }
    // A word after the collections' own values is a route word still: `/my/ships/{ship}/dock` above.
  });

  it('compares answers one level down: an envelope or a few shared fields are not the same shape', () => {
    expect(responseKeys(inferShape({ status: 'ok', engine: { power: 1, fuel: 'f' } }))).toEqual([
      'engine',
      'engine.fuel',
      'engine.power',
      'status',
    ]);
    expect(responseKeys(inferShape([{ id: 1, tags: [{ name: 'n' }] }]))).toEqual(['[]id', '[]tags', '[]tags[].name']);
    expect(responseKeys(inferShape(['a', 'b']))).toEqual(['[]string']);
    const learner = new PathLearner();
    const part = (name: string) =>
      responseKeys(inferShape({ a: 1, b: 2, c: 3, [name]: { colour: 'c', code: 'x', size: 1, material: 'm' } }));
    learn(learner, [
      ['GET', '/cars/acme/components/engine', part('engine')],
      ['GET', '/cars/acme/components/paint', part('paint')],
    ]);
    expect(learner.resolve('/cars/acme/components/engine')).toBe('/cars/acme/components/engine');
  });

  it('learns names right before an identifier at a position learned from values (/sets/{set}/{setId})', () => {
    // tcgdex.net (held-out 13): `/sets/{set}` learned from sets read alone; a set's cards, `/sets/globex/17`, went out
    // as collections, one literal path per set (`/sets/globex/{globexId}`).
    const set = responseKeys(inferShape({ id: 's', name: 'n', cards: [{ id: 'c' }] }));
    const card = responseKeys(inferShape({ id: 'c', localId: 'l', name: 'n', set: { id: 's' } }));
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/sets/Bob87', set],
      ['GET', '/sets/acme-docs', set],
      ['GET', '/sets/globex/654124', card],
      ['GET', '/sets/hooli/846310', card],
      ['GET', '/sets/stark/200706', card],
    ]);
    expect(learner.resolve(templatePath('/sets/umbrella'))).toBe('/sets/{set}');
    // Three: a parent may have that many collections.
    expect(learner.resolve(templatePath('/sets/globex/654124'))).toBe('/sets/globex/{globexId}');
    learn(learner, [['GET', '/sets/tyrell/599349', card]]);
    expect(learner.resolve(templatePath('/sets/globex/654124'))).toBe('/sets/{set}/{setId}');
    expect(learner.resolve(templatePath('/sets/zoe/17'))).toBe('/sets/{set}/{setId}');
    expect(learner.resolve('/sets/summary')).toBe('/sets/{set}');
    // Collections of different resources (other fields each) beside a position of values stay literal.
    const other = new PathLearner();
    learn(other, [
      ['GET', '/self/alice', set],
      ['GET', '/self/bob', set],
      ['GET', '/self/calls/1', repo],
      ['GET', '/self/conferences/2', user('alice')],
      ['GET', '/self/recordings/3', card],
      ['GET', '/self/queues/4', responseKeys(inferShape({ size: 1 }))],
    ]);
    expect(other.resolve(templatePath('/self/calls/1'))).toBe('/self/calls/{callId}');
  });

  it('learns names right before an identifier where values beside them were learned strict (/media/tag/{tag}/{year})', () => {
    // thebluealliance.com (held-out 19): `/team/{team}/media/tag/{tag}` learned from tags read alone, strict as they end
    // paths beside the collections `/media/tag/victor-payments/98337`, … which were then names not looked at as such:
    // five went out as they are, each naming the year after it (`/tag/wonka-infra/{wonkaInfraId}`).
    const media = list({ type: 'youtube', foreign_key: 'k', details: {}, preferred: true });
    const learner = new PathLearner();
    const traffic: Array<[string, boolean]> = [
      ['/team/heidi/media/tag/victor-payments/98337', false],
      ['/team/trent/media/tag/cyberdyne/16768', false],
      ['/team/judy/media/1139', true],
      ['/team/walter/media/tag/Peggy27', true],
      ['/team/Dave16/media/tag/hooli-billing', true],
      ['/team/globex-infra/media/tag/Bob35', true],
      ['/team/tyrell/media/tag/carol', true],
      ['/team/Carol39/media/37937', false],
      ['/team/wonka/media/tag/wonka-infra/52031', true],
      ['/team/wayne-data/media/83353', true],
      ['/team/stark/media/68271', true],
      ['/team/carol/media/tag/Trent81', false],
      ['/team/globex-summer/media/tag/initech-mobile/93138', true],
      ['/team/victor-blue/media/25601', true],
      ['/team/heidi/media/tag/ivan-river/90577', true],
    ];
    for (const [raw, answered] of traffic) {
      learner.observe(templatePath(raw), 'GET', answered ? media : null);
      learner.noteIdentifiers(templatePath(raw), raw);
    }
    expect(learner.resolve(templatePath('/team/zoe/media/tag/zork'))).toBe('/team/{team}/media/tag/{tag}');
    for (const tag of ['wonka-infra', 'cyberdyne', 'zork'])
      expect(learner.resolve(templatePath(`/team/zoe/media/tag/${tag}/2019`))).toBe(
        '/team/{team}/media/tag/{tag}/{tagId}',
      );
  });

  it('learns names right before an identifier from four values, one pair alike, and keeps collections literal', () => {
    const learner = new PathLearner();
    const tax = responseKeys(inferShape({ countryCode: 'US', jurisdictionId: 'CA', salesTaxPercentage: '7.5' }));
    const rate = responseKeys(inferShape({ shippingCost: 1 }));
    learn(learner, [
      ['GET', '/sales_tax/acme/101', tax],
      ['GET', '/sales_tax/bob-api/102', null], // answered 404: no fields
      ['PUT', '/sales_tax/frank/105', null, rate],
      ['DELETE', '/sales_tax/wayne/103', null],
      ['GET', '/sales_tax/erin/104', tax],
    ]);
    // Three of one method: a parent may have that many collections (`/self/calls/17`, `/self/conferences/18`).
    expect(learner.resolve(templatePath('/sales_tax/acme/101'))).toBe('/sales_tax/acme/{acmeId}');
    learn(learner, [['GET', '/sales_tax/ivan/106', null]]);
    expect(learner.resolve(templatePath('/sales_tax/acme/101'))).toBe('/sales_tax/{salesTax}/{salesTaxId}');
    expect(learner.resolve(templatePath('/sales_tax/wayne/103'))).toBe('/sales_tax/{salesTax}/{salesTaxId}');
    expect(learner.resolve(templatePath('/sales_tax/zoe/17'))).toBe('/sales_tax/{salesTax}/{salesTaxId}');
    // Only names before an identifier are values there.
    expect(learner.resolve('/sales_tax/summary')).toBe('/sales_tax/summary');
    // Four collections with nothing alike (no bodies, or other fields) stay literal.
    const other = new PathLearner();
    learn(other, [
      ['DELETE', '/self/calls/1', null],
      ['DELETE', '/self/conferences/2', null],
      ['DELETE', '/self/recordings/3', null],
      ['DELETE', '/self/queues/4', null],
      ['GET', '/self/calls/1', repo],
      ['GET', '/self/conferences/2', user('alice')],
    ]);
    expect(other.resolve(templatePath('/self/calls/17'))).toBe('/self/calls/{callId}');
    expect(other.resolve(templatePath('/self/queues/17'))).toBe('/self/queues/{queueId}');
    expect(other.generation).toBe(0);
  });

  it('takes a name after route words of other parents for a value (/scim/2.0/ResourceTypes/wayne)', () => {
    const learner = new PathLearner();
    const tags = list({ name: 'latest', digest: 'd' });
    const type = responseKeys(inferShape({ id: 'User', name: 'User', endpoint: '/Users', schema: 's' }));
    learn(learner, [
      ['GET', '/v2/namespaces/alice/repositories/wayne/tags', tags],
      ['GET', '/v2/namespaces/bob/repositories/web/tags', tags],
      ['GET', '/v2/namespaces/carol/repositories/cli/tags', tags],
      ['GET', '/v2/scim/2.0/ResourceTypes/hooli', type],
      ['GET', '/v2/scim/2.0/ResourceTypes/globex', type],
      ['GET', '/v2/scim/2.0/ResourceTypes/wayne', type],
    ]);
    // `repositories` follows three names: a route word, not one of two values `wayne` follows.
    expect(learner.resolve('/v2/scim/2.0/ResourceTypes/wayne')).toBe('/v2/scim/2.0/ResourceTypes/{resourcetype}');
    expect(learner.resolve('/v2/namespaces/dave/repositories/wayne/tags')).toBe(
      '/v2/namespaces/{namespace}/repositories/{repository}/tags',
    );
  });

  it('learns plain numbers at the first segment from four followed alike, not versions (/2/users)', () => {
    const learner = new PathLearner();
    const card = responseKeys(inferShape({ id: '1', title: 't', fetch: {} }));
    const cards = responseKeys(inferShape({ results: [{ id: '1', title: 't' }] }));
    learn(learner, [
      ['GET', '/1/users', user('alice')],
      ['GET', '/2/users', user('bob')],
      ['GET', '/1707/339515', card],
      ['DELETE', '/59399/514813', null],
      ['GET', '/25907', cards],
      ['GET', '/30283', cards],
      ['POST', '/52787', card, card],
    ]);
    expect(learner.resolve(templatePath('/1707/339515'))).toBe('/1707/{id}');
    expect(learner.changeable('/25907')).toBe(true);
    learn(learner, [
      ['PATCH', '/45208/784909', card, card],
      ['GET', '/3568/210074', card],
      ['GET', '/66244', cards],
    ]);
    expect(learner.resolve(templatePath('/1707/339515'))).toBe('/{name}/{id}');
    expect(learner.resolve(templatePath('/59399/514813'))).toBe('/{name}/{id}');
    expect(learner.resolve('/25907')).toBe('/{name}');
    expect(learner.resolve('/2/users')).toBe('/2/users');
  });

  it('learns first-segment values before a version from four followed by its words (/{blockchain}/v2/tickers)', () => {
    const learner = new PathLearner();
    const chain = responseKeys(inferShape({ blockbook: {}, backend: {} }));
    const tickers = responseKeys(inferShape({ ts: 1, rates: {}, currency: 'c' }));
    const mempool = responseKeys(inferShape({ mempool: [], mempoolSize: 1, page: 1, totalPages: 2 }));
    const tx = responseKeys(inferShape({ txid: 't', vin: [], vout: [], blockHeight: 1 }));
    learn(learner, [
      ['GET', '/bitcoin', chain],
      ['GET', '/alice/v2/tickers', tickers],
      ['GET', '/bob-infra/v2/mempool', mempool],
      ['GET', '/carol/v2/tickers', responseKeys(inferShape({ ts: 1, rates: {} }))],
    ]);
    // Three values: a gateway's services share words too.
    expect(learner.resolve('/alice/v2/tickers')).toBe('/alice/v2/tickers');
    learn(learner, [
      ['GET', '/dave/v2/mempool', responseKeys(inferShape({ mempool: [], page: 1 }))],
      ['GET', '/erin/v2/tx/17', tx],
      ['GET', '/frank/v2/tx/18', tx],
    ]);
    expect(learner.resolve('/alice/v2/tickers')).toBe('/{name}/v2/tickers');
    expect(learner.resolve(templatePath('/erin/v2/tx/17'))).toBe('/{name}/v2/tx/{txId}');
    // A value requested alone answering as another does alone is one too; `/health` answers other fields.
    learn(learner, [
      ['GET', '/alice', chain],
      ['GET', '/health', responseKeys(inferShape({ status: 'ok', uptime: 1 }))],
    ]);
    expect(learner.resolve('/bitcoin')).toBe('/{name}');
    expect(learner.resolve('/health')).toBe('/health');
    expect(learner.resolve('/api/v2/tickers')).toBe('/api/v2/tickers');
  });

  it('keeps a gateway of services before one version literal (/users/v2/health, /orders/v2/health)', () => {
    // Each service has routes of its own beside the one all share: names, not values.
    const learner = new PathLearner();
    const health = responseKeys(inferShape({ status: 'ok', version: '2' }));
    const services = ['users', 'orders', 'carts', 'items', 'shipments'];
    learn(
      learner,
      services.flatMap((service): Array<[string, string, readonly string[] | null]> => [
        ['GET', `/${service}/v2/health`, health],
        ['GET', `/${service}/v2/${service}-report`, list({ [service]: 1, at: 't' })],
      ]),
    );
    expect(learner.resolve('/users/v2/health')).toBe('/users/v2/health');
    expect(learner.resolve('/orders/v2/orders-report')).toBe('/orders/v2/orders-report');
  });

  it('keeps a short number literal once it is followed by four routes and never ends a path (/oauth2/1/token)', () => {
    const learner = new PathLearner();
    const token = responseKeys(inferShape({ access_token: 't', expires_in: 1 }));
    /** As the agent does: templated with the versions shown so far, then taken as evidence. */
    const send = (method: string, raw: string, keys: readonly string[] | null = null) => {
      const template = templatePath(raw, [], learner.keepsVersion);
      learner.observe(template, method, keys);
      learner.noteIdentifiers(template, raw);
      return template;
    };
    // Before anything is shown a short number is an identifier, and the path is held (it may turn out a version).
    expect(send('GET', '/oauth2/1/authorize')).toBe('/oauth2/{id}/authorize');
    expect(learner.undecided('/oauth2/{id}/authorize', '/oauth2/{id}/authorize', '/oauth2/1/authorize')).toBe(true);
    send('POST', '/oauth2/1/token', token);
    send('POST', '/oauth2/1/revoke');
    send('GET', '/oauth2/1/user', user('alice'));
    // Four routes after `1`: a version, under this and every other all-literal prefix at that depth.
    expect(send('GET', '/oauth2/1/authorize')).toBe('/oauth2/1/authorize');
    expect(learner.resolve(templatePath('/oauth2/1/files/issued', [], learner.keepsVersion))).toBe(
      '/oauth2/1/files/issued',
    );
    expect(templatePath('/statistics/1/counts', [], learner.keepsVersion)).toBe('/statistics/1/counts');
    // `2` is followed by four routes across prefixes: a version too.
    send('GET', '/oauth2/2/files/issued', list({ name: 'n', uri: 'u' }));
    send('GET', '/oauth2/2/xml/eaadhaar');
    send('POST', '/account/2/verify', token);
    expect(templatePath('/account/2/verify', [], learner.keepsVersion)).toBe('/account/{accountId}/verify');
    send('POST', '/signup/2/demoauth', token);
    expect(templatePath('/account/2/verify', [], learner.keepsVersion)).toBe('/account/2/verify');
    // What follows a version is never learned from two alike values, as after `v1`.
    send('POST', '/oauth2/1/pull/doctype', token);
    send('POST', '/oauth2/1/pull/issuers', token);
    expect(learner.resolve('/oauth2/1/pull/issuers')).toBe('/oauth2/1/pull/issuers');
    expect(learner.resolve('/oauth2/1/token')).toBe('/oauth2/1/token');
    expect(learner.undecided('/oauth2/1/token', '/oauth2/1/token', '/oauth2/1/token')).toBe(false);
  });

  it('keeps short numbers identifiers where a resource answers on its own or larger ids are seen', () => {
    const learner = new PathLearner();
    const send = (raw: string) => {
      const template = templatePath(raw, [], learner.keepsVersion);
      learner.observe(template, 'GET', null);
      learner.noteIdentifiers(template, raw);
      return template;
    };
    // A fixture post 5 with four routes, and `GET /posts/5` itself: a resource.
    send('/posts/5');
    for (const route of ['comments', 'likes', 'tags', 'shares']) send(`/posts/5/${route}`);
    expect(send('/posts/5/comments')).toBe('/posts/{postId}/comments');
    // Not held for its number (only as any word after an identifier is).
    const likes = '/posts/{postId}/likes';
    expect(learner.undecided(likes, likes, '/posts/5/likes')).toBe(learner.undecided(likes, likes));
    // Never alone, but an id of six digits at that position: a position of identifiers.
    send('/orders/7/lines');
    send('/orders/123456/lines');
    for (const route of ['notes', 'refunds', 'items', 'events']) send(`/orders/7/${route}`);
    expect(send('/orders/7/lines')).toBe('/orders/{orderId}/lines');
    // Four numbers at one position: values, not versions (an API has few).
    for (const n of ['1', '2', '3', '4']) for (const route of ['a', 'b', 'c', 'd']) send(`/boards/${n}/${route}`);
    expect(send('/boards/2/a')).toBe('/boards/{boardId}/a');
  });

  it('learns from answers that leave optional fields out, and keeps one field inside another apart', () => {
    const fields = (...names: string[]) => responseKeys(inferShape(Object.fromEntries(names.map((n) => [n, 1]))));
    const full = fields('login', 'id', 'name', 'bio', 'blog', 'company');
    const learner = new PathLearner();
    // One value seen twice, once with its optional fields left out: what it answers is every field it was seen with.
    learn(learner, [
      ['GET', '/users/alice', fields('login')],
      ['GET', '/users/alice', full],
      ['GET', '/users/bob', full],
    ]);
    expect(learner.resolve('/users/carol')).toBe('/users/{user}');
    // Two or more fields all (or all but one in five) inside the other's: the same shape, some left out.
    learn(learner, [
      ['GET', '/orgs/acme', fields('login', 'id', 'name', 'url', 'plan')],
      ['GET', '/orgs/initech', fields('login', 'id')],
    ]);
    expect(learner.resolve('/orgs/wonka')).toBe('/orgs/{org}');
    // An answer of one field among its siblings' tells nothing either way: a value still, not an exception.
    learn(learner, [
      ['GET', '/teams/dave', fields('name')],
      ['GET', '/teams/erin', fields('name', 'city', 'founded', 'colors')],
      ['GET', '/teams/frank', fields('name', 'city', 'founded', 'colors')],
    ]);
    expect(learner.resolve('/teams/dave')).toBe('/teams/{team}');
    // Nor do two answers of one field each (`{symbol}`, `{status}`): parts of one shape as likely as two shapes.
    learn(learner, [
      ['GET', '/stocks/alice', fields('symbol', 'status', 'last')],
      ['GET', '/stocks/bob', fields('symbol', 'status', 'last')],
      ['GET', '/stocks/judy', fields('symbol')],
      ['GET', '/stocks/umbrella', fields('status')],
    ]);
    expect(learner.resolve('/stocks/judy')).toBe('/stocks/{stock}');
    expect(learner.resolve('/stocks/umbrella')).toBe('/stocks/{stock}');
    // A request body of one field inside another tells nothing of the kind: two actions stay apart.
    learn(learner, [
      ['PUT', '/external/master', fields('error', 'success'), fields('cog', 'lat', 'lon', 'orientation')],
      ['PUT', '/external/orientation', fields('error', 'success'), fields('orientation')],
    ]);
    expect(learner.resolve('/external/orientation')).toBe('/external/orientation');
    // And other fields are other shapes, as before (`/users/me`).
    learn(learner, [['GET', '/users/me', fields('plan', 'email', 'quota', 'settings')]]);
    expect(learner.resolve('/users/me')).toBe('/users/me');
  });

  it('bounds its work: thousands of names before identifiers that never turn out alike cost each the same', () => {
    // Room for the 5,000 and what comes after them (5,000 records are kept by default).
    const learner = new PathLearner({ maxRecords: 6_000 });
    // Names in the place of a collection (`/tax/{name}/{id}`), each answering fields of its own: never alike.
    const name = (i: number) => `tax-${i.toString(36)}-zone`;
    const fields = (i: number) => [`a${i}`, `b${i}`, `c${i}`];
    const workAfter: number[] = [];
    for (let i = 0; i < 5_000; i++) {
      learner.observe(templatePath(`/tax/${name(i)}/${100 + i}`), 'GET', fields(i));
      if (i % 1_000 === 999) workAfter.push(learner.work);
    }
    expect(learner.size).toBe(5_000);
    const perThousand = workAfter.map((work, i) => work - (workAfter[i - 1] ?? 0));
    // Each new name is compared with the first values of its position at most, not with every other:
    // the fifth thousand costs what the second did (quadratic, it would cost four times as much).
    expect(perThousand[4]).toBeLessThanOrEqual(perThousand[1]!);
    expect(perThousand[4]! / 1_000).toBeLessThan(10);
    // None alike: each stays a literal, the collection of its own identifiers.
    expect(learner.resolve(templatePath(`/tax/${name(4_321)}/17`))).toBe(`/tax/${name(4_321)}/{id}`);
    // Something learned elsewhere decides every record again: each look at the names is remembered.
    const before = learner.work;
    learn(learner, [
      ['GET', '/users/alice', user('alice')],
      ['GET', '/users/bob', user('bob')],
    ]);
    expect(learner.resolve(templatePath('/users/carol'))).toBe('/users/{user}');
    // Each record is placed twice and decided once, 3 segments each (9 steps), its names looked at a few times more.
    expect(learner.work - before).toBeLessThan(12 * learner.size);
  });

  it('bounds the work of one observation on deep, wide routes of names and enumerations (/metrics/…)', () => {
    // wikimedia.org-like traffic: metrics × projects × enumerated positions × names, each path seen once. Each position
    // learned decides every record again (route words looked at for each literal, values compared): on main one
    // observation did 110,952 steps (compares alone) here, 1.5 s of the agent's event loop.
    const learner = new PathLearner();
    let most = 0;
    for (const path of metricsPaths(60)) {
      const before = learner.work;
      learner.observe(templatePath(path), 'GET', metricsFields);
      most = Math.max(most, learner.work - before);
    }
    expect(learner.size).toBe(60);
    // Each route word, prefix and value is looked at once while what it depends on holds (see `PathLearner.work`).
    expect(most).toBeLessThan(50_000);
  });

  it('does its work in bounded steps where one observation decides and indexes every record again (/metrics/…)', () => {
    // 200 wikimedia.org-like paths: some observations learn positions that index every record again, twice, and decide
    // each several times (on main 39827d6, held-out 12's longest add: 2,401 records placed, 1,051 decided, 0.17-0.26 s
    // of the agent's event loop in one go). In steps (`observeSteps`), the pipeline lets the app's answers through
    // between them.
    const learner = new PathLearner();
    let most = 0;
    let widest = 0;
    for (const path of metricsPaths(200)) {
      const started = learner.work;
      let before = started;
      for (const _ of learner.observeSteps(templatePath(path), 'GET', metricsFields) ?? []) {
        most = Math.max(most, learner.work - before);
        before = learner.work;
      }
      most = Math.max(most, learner.work - before);
      widest = Math.max(widest, learner.work - started);
    }
    expect(learner.size).toBe(200);
    // One observation does several steps' work (52,538 here), none more than a position decided (6,846): the index is
    // built in two steps, one a pass (10,887 in one when built whole at once).
    expect(widest).toBeGreaterThan(5 * most);
    expect(most).toBeLessThan(7_000);
    // And learns what it learned in one go.
    const whole = new PathLearner();
    for (const path of metricsPaths(200)) whole.observe(templatePath(path), 'GET', metricsFields);
    for (const path of metricsPaths(200).slice(0, 40))
      expect(learner.resolve(templatePath(path))).toBe(whole.resolve(templatePath(path)));
    expect(learner.generation).toBe(whole.generation);
  });

  it('compares a value past the first ones with the first that lead where it does (/users/{user}/keys)', () => {
    const learner = new PathLearner();
    const names = Array.from({ length: 70 }, (_, i) => `name-${i.toString(36)}`);
    // Seventy names answering alike: the first 64 are the ones every value is compared with.
    learn(
      learner,
      names.map((name): [string, string, readonly string[] | null] => ['GET', `/users/${name}`, user(name)]),
    );
    // One of the first posts a key with one field; later names post keys with all three.
    learn(learner, [['POST', `/users/${names[3]!}/keys`, null, ['title']]]);
    const key = ['key', 'read_only', 'title'];
    learn(learner, [
      ['POST', '/users/late-alice/keys', null, key],
      ['POST', '/users/late-bob/keys', null, key],
    ]);
    // Each contradicts the one-field body among the first values, and is alike with the other late one.
    expect(learner.resolve('/users/late-alice/keys')).toBe('/users/{user}/keys');
    expect(learner.resolve('/users/late-bob/keys')).toBe('/users/{user}/keys');
  });

  it('takes values whose answers show fields their siblings show elsewhere for values (PUT /sandboxes/tyrell-blue)', () => {
    const fields = (...names: string[]) => responseKeys(inferShape(Object.fromEntries(names.map((n) => [n, 1]))));
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/sandboxes/alice', fields('id', 'name', 'description', 'gitUrl', 'stackType', 'proxyStatus')],
      ['GET', '/sandboxes/bob', fields('id', 'name', 'description', 'gitUrl', 'sandboxUrl', 'runtimeVersion')],
      // The only two updates answered 200, each with other optional fields: they contradict each other and agree with
      // none, but every field they take or answer a sandbox read shows.
      [
        'PUT',
        '/sandboxes/carol',
        fields('id', 'gitUrl', 'proxyStatus', 'runtimeVersion'),
        fields('name', 'sandboxUrl'),
      ],
      [
        'PUT',
        '/sandboxes/dave',
        fields('name', 'description', 'stackType'),
        fields('description', 'gitUrl', 'stackType'),
      ],
      // Fewer fields than its siblings, and one of its own: a name still.
      ['GET', '/sandboxes/erin', fields('sandboxUrl', 'href')],
      // Mostly fields of its own: a route word (`/users/me`), though it shares one.
      ['GET', '/sandboxes/settings', fields('id', 'plan', 'quota', 'theme')],
    ]);
    expect(learner.resolve('/sandboxes/carol')).toBe('/sandboxes/{sandbox}');
    expect(learner.resolve('/sandboxes/dave')).toBe('/sandboxes/{sandbox}');
    expect(learner.resolve('/sandboxes/erin')).toBe('/sandboxes/{sandbox}');
    expect(learner.resolve('/sandboxes/settings')).toBe('/sandboxes/settings');
  });

  it('keeps a word whose answers show a field of its own twice an exception (postmark /messages/outbound/clicks)', () => {
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/messages/outbound/alice/details', ['From', 'Tag', 'TextBody', 'To']],
      ['GET', '/messages/outbound/bob/details', ['From', 'Tag', 'TextBody']],
      ['GET', '/messages/outbound/carol/dump', ['Body']],
      ['GET', '/messages/outbound/dave/dump', ['Body']],
      // Lists of their own: each contradicts the other and agrees with no message. Of their two top-level fields one
      // is shared (`TotalCount`), little of their own by that count, but `Clicks` (`Opens`) comes in two answers of
      // theirs and in none of any sibling: fields of their own, not optional ones the others left out.
      ['GET', '/messages/outbound/clicks', ['Clicks', 'Clicks[].OS', 'TotalCount']],
      ['GET', '/messages/outbound/opens', ['Opens', 'Opens[].OS', 'TotalCount']],
      ['GET', '/messages/outbound/clicks', ['Clicks', 'Clicks[].Geo', 'TotalCount']],
      ['GET', '/messages/outbound/opens', ['Opens', 'Opens[].Geo', 'TotalCount']],
    ]);
    expect(learner.resolve('/messages/outbound/alice/details')).toBe('/messages/outbound/{outbound}/details');
    expect(learner.resolve('/messages/outbound/clicks')).toBe('/messages/outbound/clicks');
    expect(learner.resolve('/messages/outbound/opens')).toBe('/messages/outbound/opens');
  });

  it('takes a value whose body left optional fields out for a value, not one with a field of its own', () => {
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/users/alice', user('alice')],
      ['GET', '/users/bob', user('bob')],
      ['POST', '/users/alice/links', null, ['name', 'status', 'target']],
      ['POST', '/users/bob/links', null, ['name', 'target']],
      // One field: it contradicts both bodies (none alike), but every field it shows they showed.
      ['POST', '/users/carol/links', null, ['status']],
      // A field neither showed: another shape, an exception as before.
      ['POST', '/users/dave/links', null, ['priority']],
    ]);
    expect(learner.resolve('/users/carol/links')).toBe('/users/{user}/links');
    expect(learner.resolve('/users/dave/links')).toBe('/users/dave/links');
  });

  it('keeps words seen after two words of one prefix literal, and their siblings (/stats/outbound/clicks/platforms)', () => {
    const fields = (...names: string[]) => responseKeys(inferShape(Object.fromEntries(names.map((n) => [n, 1]))));
    const message = fields('MessageID', 'Subject', 'To', 'From');
    const days = fields('Days', 'Desktop', 'Mobile', 'WebMail');
    const learner = new PathLearner();
    learn(learner, [
      // Names at the same depth under another prefix, each followed by words: values there.
      ...['alice', 'bob', 'carol', 'dave', 'erin', 'frank'].map((name): [string, string, readonly string[] | null] => [
        'GET',
        `/messages/outbound/${name}/details`,
        message,
      ]),
      // Two words answering fields of their own, each followed by words.
      ['GET', '/stats/outbound/clicks', fields('Clicks', 'Unique', 'Links')],
      ['GET', '/stats/outbound/opens', fields('Opens', 'Read', 'Total')],
      ['GET', '/stats/outbound/clicks/location', days],
      ['GET', '/stats/outbound/clicks/browserfamilies', days],
      ['GET', '/stats/outbound/clicks/platforms', days],
      ['GET', '/stats/outbound/opens/platforms', days],
      ['GET', '/stats/outbound/opens/emailclients', days],
    ]);
    expect(learner.resolve('/messages/outbound/grace/details')).toBe('/messages/outbound/{outbound}/details');
    // `platforms` follows both words followed by a word under `/stats/outbound`: a route word, and its siblings
    // (two alike) are the parent's other routes, learned from four alike only.
    expect(learner.resolve('/stats/outbound/clicks/location')).toBe('/stats/outbound/clicks/location');
    expect(learner.resolve('/stats/outbound/opens/emailclients')).toBe('/stats/outbound/opens/emailclients');
  });

  it('takes different values all along before an identifier for routes, not one position (/v1/historic/agg/second/wayne/{date})', () => {
    const learner = new PathLearner();
    learn(learner, [
      ['GET', '/v1/historic/agg/second/wayne/2020-10-14', responseKeys(inferShape({ symbol: 's', ticks: [{ t: 1 }] }))],
      ['GET', '/v1/historic/forex/walter-billing/victor/2020-10-14', responseKeys(inferShape({}))],
    ]);
    // Words then names, then a date, nothing to compare: no literal of one is the other's, nothing shows them one position.
    expect(learner.resolve(templatePath('/v1/historic/agg/second/wayne/2020-10-14'))).toMatch(
      /^\/v1\/historic\/agg\/second\/wayne\/\{/,
    );
    expect(learner.resolve(templatePath('/v1/historic/forex/walter-billing/victor/2020-10-14'))).toMatch(
      /^\/v1\/historic\/forex\/walter-billing\/victor\/\{/,
    );
    // A literal they share between still shows values of one position (/repos/dave/web/issues/17).
    learn(learner, [
      ['GET', '/repos/dave/web/issues/17', repo],
      ['GET', '/repos/erin/cli/issues/18', repo],
    ]);
    expect(learner.resolve(templatePath('/repos/frank/api/issues/19'))).toBe('/repos/{owner}/{repo}/issues/{issueId}');
  });

  it('learns names all along that answer no body from four, each after other identifier values (/peppol_identifiers/…)', () => {
    const learner = new PathLearner();
    const see = (raw: string) => answeredNothing(learner, 'DELETE', raw);
    // Three names each, all different, nothing answered: three are not enough to tell them from routes.
    see('/legal_entities/25312/peppol_identifiers/globex/grace-river/Mallory88');
    see('/legal_entities/26546/peppol_identifiers/oscar/tyrell-dinner/Dave59');
    see('/legal_entities/27401/peppol_identifiers/acme/umbrella-river/wayne');
    const next = templatePath('/legal_entities/30000/peppol_identifiers/frank/oscar/stark');
    expect(learner.resolve(next)).toBe('/legal_entities/{legalEntityId}/peppol_identifiers/frank/oscar/stark');
    see('/legal_entities/28733/peppol_identifiers/mallory/initech-cli/carol');
    expect(learner.resolve(next)).toBe(
      '/legal_entities/{legalEntityId}/peppol_identifiers/{namespace}/{owner}/{peppolIdentifier}',
    );
    // Names all along that answered fields: alike only from agreeing answers, as before (`/projects/acme/web/alice`).
    const other = new PathLearner();
    const keys = responseKeys(inferShape({ id: 1 }));
    learn(other, [
      ['GET', '/projects/acme/web/alice', keys],
      ['GET', '/projects/bob/cli/dave', null],
      ['GET', '/projects/carol/api/erin', null],
      ['GET', '/projects/dave/docs/frank', null],
    ]);
    expect(other.resolve('/projects/erin/app/grace')).toBe('/projects/erin/app/grace');
  });

  it('keeps words beside identifiers under one parent literal under a sibling sharing two of them (/stickers/search)', () => {
    const learner = new PathLearner();
    const gif = responseKeys(inferShape({ data: { id: 'x', url: 'u', title: 't' }, meta: { status: 200 } }));
    const gifs = responseKeys(inferShape({ data: [{ id: 'x', url: 'u', title: 't' }], meta: { status: 200 } }));
    learn(learner, [
      ['GET', '/gifs/17', gif],
      ['GET', '/gifs/18', gif],
      ['GET', '/gifs/random', gif],
      ['GET', '/gifs/translate', gif],
      ['GET', '/gifs/search', gifs],
      ['GET', '/stickers/random', gif],
      ['GET', '/stickers/translate', gif],
      ['GET', '/stickers/search', gifs],
    ]);
    // `random`, `translate`, `search` are routes beside `/gifs/{gifId}`; `/stickers` shares them: its routes too.
    expect(learner.resolve('/stickers/random')).toBe('/stickers/random');
    expect(learner.resolve('/stickers/translate')).toBe('/stickers/translate');
    // One word shared (`me` of `/teams/me` beside `/teams/17`) does not keep a sibling's values literal.
    const org = responseKeys(inferShape({ login: 'l', id: 1, description: 'd' }));
    learn(learner, [
      ['GET', '/teams/17', org],
      ['GET', '/teams/me', user('x')],
      ['GET', '/orgs/me', user('x')],
      ['GET', '/orgs/acme', org],
      ['GET', '/orgs/initech', org],
    ]);
    expect(learner.resolve('/orgs/hooli')).toBe('/orgs/{org}');
  });

  it('stays bounded: records past maxRecords are not kept', () => {
    const learner = new PathLearner({ maxRecords: 10 });
    for (let i = 0; i < 100; i++) learner.observe(`/things/t${'x'.repeat(i % 7)}/a${i}`, 'GET', null);
    expect(learner.size).toBe(10);
  });
});
