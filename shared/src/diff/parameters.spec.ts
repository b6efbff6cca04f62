import type { ParametersDoc } from '../api/types';
import { nextVersion } from '../version/version';
import { diffEndpoint } from './diff';
import { extendParameters, observedParameters, parameterChanges } from './parameters';
import type { EndpointShapes } from './types';

const documented: ParametersDoc = {
  query: [
    { name: 'limit', required: false },
    { name: 'q', required: true },
  ],
  headers: [{ name: 'x-tenant', required: true }],
};

describe('observedParameters', () => {
  it('is required where every row has the name, lower-cases headers and leaves out standard ones', () => {
    expect(
      observedParameters([
        { query: ['limit', 'q'], requestHeaders: ['accept', 'user-agent', 'X-Tenant'] },
        { query: ['q'], requestHeaders: ['x-tenant', 'x-forwarded-for'] },
      ]),
    ).toEqual({
      query: [
        { name: 'limit', required: false },
        { name: 'q', required: true },
      ],
      headers: [{ name: 'x-tenant', required: true }],
    });
  });

  it('is undefined when a row was read without names (then nothing is compared)', () => {
    expect(observedParameters([{ query: ['q'], requestHeaders: [] }, {}])).toBeUndefined();
    expect(observedParameters([])).toBeUndefined();
  });
});

describe('parameterChanges', () => {
  it.each<[string, ParametersDoc, Array<{ change: string; in: string; at: string }>]>([
    ['the documented parameters', documented, []],
    [
      'a documented optional name not sent is no change',
      { query: [{ name: 'q', required: true }], headers: [{ name: 'x-tenant', required: true }] },
      [],
    ],
    [
      'a new query parameter and header are added',
      {
        query: [...documented.query, { name: 'page', required: false }],
        headers: [
          { name: 'x-region', required: true },
          { name: 'x-tenant', required: true },
        ],
      },
      [
        { change: 'added', in: 'query', at: 'page' },
        { change: 'added', in: 'header', at: 'x-region' },
      ],
    ],
    [
      'a required name not always sent is now optional',
      { query: [{ name: 'q', required: false }], headers: [] },
      [
        { change: 'now optional', in: 'query', at: 'q' },
        { change: 'now optional', in: 'header', at: 'x-tenant' },
      ],
    ],
  ])('%s', (_name, observed, expected) => {
    const changes = parameterChanges(documented, observed);
    expect(changes.map(({ change, in: location, at }) => ({ change, in: location, at }))).toEqual(expected);
    expect(changes.every((change) => !change.breaking)).toBe(true);
  });

  it('compares nothing when either side has no parameter lists', () => {
    const everything: ParametersDoc = { query: [{ name: 'page', required: true }], headers: [] };
    expect(parameterChanges(undefined, everything)).toEqual([]);
    expect(parameterChanges(null, everything)).toEqual([]);
    expect(parameterChanges(documented, undefined)).toEqual([]);
  });
});

describe('extendParameters', () => {
  it('documents new names as optional and keeps a required name required only when always sent', () => {
    const observed: ParametersDoc = {
      query: [
        { name: 'page', required: true },
        { name: 'q', required: false },
      ],
      headers: [{ name: 'x-tenant', required: true }],
    };
    const extended = extendParameters(documented, observed);
    expect(extended).toEqual({
      query: [
        { name: 'limit', required: false },
        { name: 'page', required: false },
        { name: 'q', required: false },
      ],
      headers: [{ name: 'x-tenant', required: true }],
    });
    // What was accepted conforms to the result.
    expect(parameterChanges(extended, observed)).toEqual([]);
  });

  it('makes a required name no exchange sent optional, and keeps the documentation when nothing was observed', () => {
    expect(extendParameters(documented, { query: [], headers: [] })?.headers).toEqual([
      { name: 'x-tenant', required: false },
    ]);
    expect(extendParameters(documented, undefined)).toBe(documented);
    expect(extendParameters(undefined, undefined)).toBeUndefined();
    expect(extendParameters(undefined, { query: [{ name: 'q', required: true }], headers: [] })).toEqual({
      query: [{ name: 'q', required: false }],
      headers: [],
    });
  });
});

describe('diffEndpoint with parameters', () => {
  const getPosts: EndpointShapes = {
    request: null,
    responses: [{ status: 200, contentType: 'application/json', shape: { kind: 'string' } }],
    parameters: documented,
  };

  it('lists parameter changes before body changes and bumps the minor version for them', () => {
    const observed: EndpointShapes = {
      ...getPosts,
      parameters: { ...documented, query: [...documented.query, { name: 'page', required: false }] },
    };
    const changes = diffEndpoint(getPosts, observed);
    expect(changes).toEqual([{ change: 'added', in: 'query', at: 'page', breaking: false }]);
    expect(nextVersion({ major: 1, minor: 0 }, changes)).toEqual({ major: 1, minor: 1 });
  });

  it('behaves as before for a version without parameter lists', () => {
    const { parameters: _ignored, ...withoutParameters } = getPosts;
    expect(
      diffEndpoint(withoutParameters, {
        ...getPosts,
        parameters: { query: [{ name: 'page', required: true }], headers: [] },
      }),
    ).toEqual([]);
  });
});
