import { inferShape } from '../shape/infer';
import type { Shape } from '../shape/types';
import { conformsTo } from './conform';
import { diffEndpoint, diffShapes, diffVersions } from './diff';
import type { Direction, EndpointShapes } from './types';
import { array, CUT, N, object, oneOf, POST_REQUEST, POST_RESPONSE, S, U, Z } from '../../test/shape-fixtures';

const UUID: Shape = { kind: 'string', format: 'uuid' };
const EMAIL: Shape = { kind: 'string', format: 'email' };

type Row = [string, Shape, Shape, Array<{ change: string; at: string; breaking: boolean }>];

/** The classification table of docs/shapes.md, one row per case, for each direction. */
const responseRows: Row[] = [
  [
    'an added field does not break',
    POST_RESPONSE,
    object(['author', true, S], ['id', true, N], ['slug', true, S], ['title', true, S]),
    [{ change: 'added', at: '$.slug', breaking: false }],
  ],
  [
    'a removed required field breaks',
    POST_RESPONSE,
    object(['author', true, S], ['title', true, S]),
    [{ change: 'removed', at: '$.id', breaking: true }],
  ],
  ['an optional documented field may be absent', object(['a', true, N], ['b', false, N]), object(['a', true, N]), []],
  [
    'a field made optional breaks',
    POST_RESPONSE,
    object(['author', false, S], ['id', true, N], ['title', true, S]),
    [{ change: 'now optional', at: '$.author', breaking: true }],
  ],
  [
    'a field made nullable breaks',
    POST_RESPONSE,
    object(['author', true, oneOf(S, Z)], ['id', true, N], ['title', true, S]),
    [{ change: 'type changed', at: '$.author', breaking: true }],
  ],
  [
    'a changed type breaks',
    POST_RESPONSE,
    object(['author', true, S], ['id', true, S], ['title', true, S]),
    [{ change: 'type changed', at: '$.id', breaking: true }],
  ],
  ['a narrower type (null no longer seen) conforms', object(['a', true, oneOf(S, Z)]), object(['a', true, S]), []],
  ['an optional field always present conforms', object(['a', false, N]), object(['a', true, N]), []],
  [
    'a lost format breaks',
    object(['id', true, UUID]),
    object(['id', true, S]),
    [{ change: 'type changed', at: '$.id', breaking: true }],
  ],
  ['a gained format conforms', object(['id', true, S]), object(['id', true, UUID]), []],
  [
    'a type where nothing was known does not break',
    object(['tags', true, array(U)]),
    object(['tags', true, array(S)]),
    [{ change: 'type changed', at: '$.tags[]', breaking: false }],
  ],
  ['an observed unknown conforms to anything', object(['tags', true, array(S)]), object(['tags', true, array(U)]), []],
  [
    'a value cut by a limit conforms to anything',
    object(['deep', true, object(['a', true, N])]),
    object(['deep', true, CUT]),
    [],
  ],
  [
    'a field added inside array items',
    object(['items', true, array(object(['id', true, N]))]),
    object(['items', true, array(object(['id', true, N], ['name', true, S]))]),
    [{ change: 'added', at: '$.items[].name', breaking: false }],
  ],
  [
    'a change inside an object option of a oneOf, at the same path',
    object(['author', true, oneOf(object(['id', true, N]), Z)]),
    object(['author', true, oneOf(object(['id', true, S]), Z)]),
    [{ change: 'type changed', at: '$.author.id', breaking: true }],
  ],
  [
    'a field a truncated documented object may not list',
    { kind: 'object', fields: [], truncated: true },
    object(['x', true, N]),
    [],
  ],
  [
    'a field a truncated observed object may have cut',
    object(['x', true, N]),
    { kind: 'object', fields: [], truncated: true },
    [],
  ],
  [
    'a name that is not an identifier uses brackets',
    object(),
    object(['first name', false, S]),
    [{ change: 'added', at: '$["first name"]', breaking: false }],
  ],
  [
    'a different body kind breaks',
    POST_RESPONSE,
    array(POST_RESPONSE),
    [{ change: 'type changed', at: '$', breaking: true }],
  ],
];

const requestRows: Row[] = [
  [
    'a new required field breaks',
    POST_REQUEST,
    object(['author', true, S], ['body', true, S], ['title', true, S]),
    [{ change: 'added', at: '$.body', breaking: true }],
  ],
  [
    'a new optional field does not break',
    POST_REQUEST,
    object(['author', true, S], ['body', false, S], ['title', true, S]),
    [{ change: 'added', at: '$.body', breaking: false }],
  ],
  [
    'a removed field the server no longer needs does not break',
    POST_REQUEST,
    object(['title', true, S]),
    [{ change: 'removed', at: '$.author', breaking: false }],
  ],
  [
    'a field made optional does not break',
    POST_REQUEST,
    object(['author', false, S], ['title', true, S]),
    [{ change: 'now optional', at: '$.author', breaking: false }],
  ],
  [
    'a changed type breaks',
    POST_REQUEST,
    object(['author', true, N], ['title', true, S]),
    [{ change: 'type changed', at: '$.author', breaking: true }],
  ],
  [
    'a field made nullable (server accepts more) does not break',
    POST_REQUEST,
    object(['author', true, oneOf(S, Z)], ['title', true, S]),
    [{ change: 'type changed', at: '$.author', breaking: false }],
  ],
  [
    'a type replaced in a oneOf breaks',
    object(['a', true, oneOf(S, Z)]),
    object(['a', true, oneOf(N, Z)]),
    [{ change: 'type changed', at: '$.a', breaking: true }],
  ],
  [
    'a lost format (server accepts more) does not break',
    object(['id', true, UUID]),
    object(['id', true, S]),
    [{ change: 'type changed', at: '$.id', breaking: false }],
  ],
  [
    'a different format breaks',
    object(['id', true, UUID]),
    object(['id', true, EMAIL]),
    [{ change: 'type changed', at: '$.id', breaking: true }],
  ],
];

function summary(
  documented: Shape,
  observed: Shape,
  direction: Direction,
): Array<{ change: string; at: string; breaking: boolean }> {
  return diffShapes(documented, observed, direction).map(({ change, at, breaking }) => ({ change, at, breaking }));
}

describe('diffShapes in a response', () => {
  it.each(responseRows)('%s', (_name, documented, observed, expected) => {
    expect(summary(documented, observed, 'response')).toEqual(expected);
    expect(conformsTo(observed, documented)).toBe(expected.length === 0);
  });
});

describe('diffShapes in a request', () => {
  it.each(requestRows)('%s', (_name, documented, observed, expected) => {
    expect(summary(documented, observed, 'request')).toEqual(expected);
    expect(conformsTo(observed, documented)).toBe(expected.length === 0);
  });
});

describe('diffShapes', () => {
  it('carries direction, status and both shapes', () => {
    expect(
      diffShapes(POST_RESPONSE, object(['author', true, S], ['id', true, S], ['title', true, S]), 'response', 201),
    ).toEqual([
      { change: 'type changed', in: 'response', status: 201, at: '$.id', documented: N, observed: S, breaking: true },
    ]);
  });

  it('lists every change, in field name order', () => {
    const observed = object(['author', false, N], ['extra', true, S]);
    expect(summary(POST_RESPONSE, observed, 'response')).toEqual([
      { change: 'now optional', at: '$.author', breaking: true },
      { change: 'type changed', at: '$.author', breaking: true },
      { change: 'added', at: '$.extra', breaking: false },
      { change: 'removed', at: '$.id', breaking: true },
      { change: 'removed', at: '$.title', breaking: true },
    ]);
  });

  it('finds nothing between the seed-spec POST /posts shapes and the same traffic again', () => {
    expect(diffShapes(POST_REQUEST, inferShape({ title: 'Again', author: 'Ann' }), 'request')).toEqual([]);
    expect(diffShapes(POST_RESPONSE, inferShape({ id: 2, title: 'Again', author: 'Ann' }), 'response', 201)).toEqual(
      [],
    );
  });
});

const postsEndpoint: EndpointShapes = {
  request: { contentType: 'application/json', shape: POST_REQUEST },
  responses: [{ status: 201, contentType: 'application/json; charset=utf-8', shape: POST_RESPONSE }],
};

describe('diffEndpoint', () => {
  it.each<
    [string, EndpointShapes, Array<{ change: string; in: string; status?: number; at: string; breaking: boolean }>]
  >([
    ['the documented POST /posts itself', postsEndpoint, []],
    [
      'media type parameters and letter case are not a change',
      {
        request: { contentType: 'Application/JSON; charset=utf-8', shape: POST_REQUEST },
        responses: [{ status: 201, contentType: 'application/json', shape: POST_RESPONSE }],
      },
      [],
    ],
    [
      'a new success status breaks',
      {
        ...postsEndpoint,
        responses: [...postsEndpoint.responses, { status: 200, contentType: 'application/json', shape: POST_RESPONSE }],
      },
      [{ change: 'new status', in: 'response', status: 200, at: '$', breaking: true }],
    ],
    [
      'a new error status does not break',
      {
        ...postsEndpoint,
        responses: [{ status: 400, contentType: 'application/problem+json', shape: object(['message', true, S]) }],
      },
      [{ change: 'new status', in: 'response', status: 400, at: '$', breaking: false }],
    ],
    ['a documented status not seen is no change', { ...postsEndpoint, responses: [] }, []],
    [
      'a new response content type breaks',
      { ...postsEndpoint, responses: [{ status: 201, contentType: 'text/html', shape: null }] },
      [{ change: 'new content type', in: 'response', status: 201, at: '$', breaking: true }],
    ],
    [
      'a new request content type breaks',
      { ...postsEndpoint, request: { contentType: 'application/x-www-form-urlencoded', shape: null } },
      [{ change: 'new content type', in: 'request', at: '$', breaking: true }],
    ],
    [
      'a request body no longer sent does not break',
      { ...postsEndpoint, request: null },
      [{ change: 'removed', in: 'request', at: '$', breaking: false }],
    ],
    [
      'a response body change carries its status',
      {
        ...postsEndpoint,
        responses: [
          { status: 201, contentType: 'application/json', shape: object(['author', true, S], ['title', true, S]) },
        ],
      },
      [{ change: 'removed', in: 'response', status: 201, at: '$.id', breaking: true }],
    ],
    [
      'a request body change',
      {
        ...postsEndpoint,
        request: { contentType: 'application/json', shape: object(['author', true, S], ['title', true, N]) },
      },
      [{ change: 'type changed', in: 'request', at: '$.title', breaking: true }],
    ],
    [
      'a body without a recorded shape is no change',
      { ...postsEndpoint, responses: [{ status: 201, contentType: 'application/json', shape: null }] },
      [],
    ],
  ])('%s', (_name, observed, expected) => {
    expect(
      diffEndpoint(postsEndpoint, observed).map(({ change, in: direction, status, at, breaking }) => ({
        change,
        in: direction,
        ...(status === undefined ? {} : { status }),
        at,
        breaking,
      })),
    ).toEqual(expected);
  });

  it('a request body where none was documented breaks', () => {
    const getPosts: EndpointShapes = {
      request: null,
      responses: [{ status: 200, contentType: 'application/json', shape: array(POST_RESPONSE) }],
    };
    expect(
      diffEndpoint(getPosts, { ...getPosts, request: { contentType: 'application/json', shape: POST_REQUEST } }),
    ).toEqual([{ change: 'added', in: 'request', at: '$', observed: POST_REQUEST, breaking: true }]);
  });

  it('compares a response with the documented one of the same status and media type', () => {
    const twoTypes: EndpointShapes = {
      request: null,
      responses: [
        { status: 200, contentType: 'application/json', shape: POST_RESPONSE },
        { status: 200, contentType: 'text/csv', shape: null },
      ],
    };
    expect(
      diffEndpoint(twoTypes, { request: null, responses: [{ status: 200, contentType: 'text/csv', shape: null }] }),
    ).toEqual([]);
    expect(
      diffEndpoint(twoTypes, { request: null, responses: [{ status: 200, contentType: 'text/html', shape: null }] }),
    ).toMatchObject([{ change: 'new content type', status: 200 }]);
  });

  it('names the media types of a new content type', () => {
    const [change] = diffEndpoint(postsEndpoint, {
      ...postsEndpoint,
      responses: [{ status: 201, contentType: 'text/html; charset=utf-8', shape: null }],
    });
    expect(change?.contentTypes).toEqual({ documented: 'application/json', observed: 'text/html' });
  });
});

describe('diffVersions (planned against documented)', () => {
  it.each<[string, Direction, Shape, Shape, Array<{ change: string; at: string; breaking: boolean }>]>([
    ['nothing changed', 'response', POST_RESPONSE, POST_RESPONSE, []],
    [
      'response: a required field removed breaks (listed once)',
      'response',
      POST_RESPONSE,
      object(['author', true, S], ['title', true, S]),
      [{ change: 'removed', at: '$.id', breaking: true }],
    ],
    [
      'response: an optional field removed does not break',
      'response',
      object(['a', true, N], ['b', false, S]),
      object(['a', true, N]),
      [{ change: 'removed', at: '$.b', breaking: false }],
    ],
    [
      'response: an optional field made required does not break',
      'response',
      object(['a', false, N]),
      object(['a', true, N]),
      [{ change: 'now required', at: '$.a', breaking: false }],
    ],
    [
      'response: a type narrowed does not break',
      'response',
      object(['a', true, oneOf(S, Z)]),
      object(['a', true, S]),
      [{ change: 'type changed', at: '$.a', breaking: false }],
    ],
    [
      'response: a type widened breaks',
      'response',
      object(['a', true, S]),
      object(['a', true, oneOf(S, Z)]),
      [{ change: 'type changed', at: '$.a', breaking: true }],
    ],
    [
      'response: a type replaced breaks (listed once)',
      'response',
      object(['a', true, S]),
      object(['a', true, N]),
      [{ change: 'type changed', at: '$.a', breaking: true }],
    ],
    [
      'request: an optional field made required breaks',
      'request',
      object(['a', false, N]),
      object(['a', true, N]),
      [{ change: 'now required', at: '$.a', breaking: true }],
    ],
    [
      'request: a type narrowed (null no longer accepted) breaks',
      'request',
      object(['a', true, oneOf(S, Z)]),
      object(['a', true, S]),
      [{ change: 'type changed', at: '$.a', breaking: true }],
    ],
    [
      'request: a format now demanded breaks',
      'request',
      object(['id', true, S]),
      object(['id', true, UUID]),
      [{ change: 'type changed', at: '$.id', breaking: true }],
    ],
    [
      'request: a new required field breaks (listed once)',
      'request',
      POST_REQUEST,
      object(['author', true, S], ['body', true, S], ['title', true, S]),
      [{ change: 'added', at: '$.body', breaking: true }],
    ],
    [
      'request: a new optional field does not break',
      'request',
      POST_REQUEST,
      object(['author', true, S], ['body', false, S], ['title', true, S]),
      [{ change: 'added', at: '$.body', breaking: false }],
    ],
    [
      'request: an optional field dropped does not break',
      'request',
      object(['a', true, N], ['b', false, S]),
      object(['a', true, N]),
      [{ change: 'removed', at: '$.b', breaking: false }],
    ],
  ])('%s', (_name, direction, before, after, expected) => {
    expect(
      diffVersions(before, after, direction).map(({ change, at, breaking }) => ({ change, at, breaking })),
    ).toEqual(expected);
  });

  it('gives the before shape as documented and the after shape as observed, with direction and status', () => {
    expect(diffVersions(object(['a', false, N]), object(['a', true, N]), 'response', 200)).toEqual([
      { change: 'now required', in: 'response', status: 200, at: '$.a', documented: N, observed: N, breaking: false },
    ]);
  });
});
