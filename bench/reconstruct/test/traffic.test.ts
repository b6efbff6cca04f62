// The bench's traffic plan and corpus choice on small documents (the real generator and the real
// directory are the bench's own install; here a plain generator stands in for json-schema-faker).
import { FILTERS, assess, selectCorpus, type CorpusEntry } from '../lib/corpus';
import { listOperations, requestable, servedCopy } from '../lib/openapi';
import { createRng } from '../lib/rng';
import { pathValue, planTraffic, credentials } from '../lib/traffic';

const plain = (schema: { type?: string }) =>
  schema.type === 'integer' || schema.type === 'number' ? 7 : schema.type === 'object' ? { name: 'x' } : 'value';

const doc = {
  openapi: '3.0.3',
  info: { title: 't', version: '1' },
  security: [{ key: [] }],
  components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Key' } } },
  paths: {
    '/orgs/{org}/members/{memberId}': {
      parameters: [
        { in: 'path', name: 'org', required: true, schema: { type: 'string' } },
        { in: 'path', name: 'memberId', required: true, schema: { type: 'integer', minimum: 1, maximum: 50 } },
      ],
      get: {
        parameters: [{ in: 'query', name: 'q', required: true, schema: { type: 'string' } }],
        responses: {
          '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } },
          '404': { description: 'no' },
          '500': { description: 'oops' },
        },
      },
      put: {
        requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
        responses: { '204': { description: 'done' } },
      },
    },
    '/things/{thingUuid}': {
      get: {
        parameters: [{ in: 'path', name: 'thingUuid', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
  },
};

describe('traffic', () => {
  it('plans 3-10 plain requests per operation plus one per other documented status, the same for the same seed', () => {
    const operations = listOperations(doc);
    const first = planTraffic(doc, operations, 'seed', plain);
    expect(planTraffic(doc, operations, 'seed', plain)).toEqual(first);
    expect(planTraffic(doc, operations, 'other', plain)).not.toEqual(first);
    for (const [index] of operations.entries()) {
      const mine = first.filter((request) => request.operation === index);
      const plainCount = mine.filter((request) => request.prefer === undefined).length;
      expect(plainCount).toBeGreaterThanOrEqual(3);
      expect(plainCount).toBeLessThanOrEqual(10);
    }
    expect(
      first
        .filter((request) => request.operation === 0 && request.prefer !== undefined)
        .map((request) => request.prefer)
        .sort(),
    ).toEqual([404, 500]);
    const get = first.find((request) => request.operation === 0 && request.prefer === 404);
    expect(get?.headers).toMatchObject({ prefer: 'code=404', 'x-key': 'bench-key-0001', accept: 'application/json' });
    expect(get?.path).toMatch(/^\/orgs\/[^/{}]+\/members\/([1-9]|[1-4]\d|50)\?q=value$/);
    const put = first.find((request) => request.operation === 1);
    expect(put).toMatchObject({ method: 'PUT', body: '{"name":"x"}' });
    expect(put?.headers['content-type']).toBe('application/json');
  });

  it('accepts the JSON media type the success answer declares, a vendor one too', () => {
    const vendor = {
      ...doc,
      paths: {
        '/config/antenna': {
          get: {
            responses: {
              '200': {
                description: 'ok',
                content: { 'application/vnd.acme.antenna+json': { schema: { type: 'object' } } },
              },
            },
          },
        },
        '/report': {
          get: { responses: { '200': { description: 'ok', content: { 'text/csv': { schema: { type: 'string' } } } } } },
        },
      },
    };
    const planned = planTraffic(vendor, listOperations(vendor), 'seed', plain);
    const antenna = planned.find((request) => request.path === '/config/antenna');
    const report = planned.find((request) => request.path === '/report');
    expect(antenna?.headers.accept).toBe('application/vnd.acme.antenna+json');
    expect(report?.headers.accept).toBe('*/*');
  });

  it('varies names and slugs, and gives UUIDs where the name says so', () => {
    const rng = createRng(3);
    const names = new Set(
      Array.from({ length: 20 }, () => pathValue({ name: 'org', schema: { type: 'string' } }, doc, rng, plain)),
    );
    expect(names.size).toBeGreaterThan(5);
    for (const name of names) expect(name).toMatch(/^[A-Za-z][A-Za-z0-9-]*$/);
    expect(pathValue({ name: 'thingUuid', schema: { type: 'string' } }, doc, rng, plain)).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(pathValue({ name: 'id', schema: { type: 'string', enum: ['only'] } }, doc, rng, plain)).toBe('only');
    // A pattern the name heuristics miss: generated from the schema instead.
    expect(pathValue({ name: 'code', schema: { type: 'string', pattern: '^value$' } }, doc, rng, plain)).toBe('value');
  });

  it('sends credentials the way the security scheme says', () => {
    const operation = listOperations({
      ...doc,
      security: [{ basic: [] }],
      components: { securitySchemes: { basic: { type: 'http', scheme: 'basic' } } },
    })[0];
    expect(
      operation &&
        credentials(
          { components: { securitySchemes: { basic: { type: 'http', scheme: 'basic' } } }, security: [{ basic: [] }] },
          operation,
        ).headers.authorization,
    ).toMatch(/^Basic /);
  });
});

describe('corpus', () => {
  it('tags a document by style and refuses what the bench cannot score', () => {
    const verdict = assess(
      {
        ...doc,
        paths: {
          ...doc.paths,
          '/a': { get: { responses: { '200': { content: { 'application/json': { schema: {} } } } } } },
          '/b/v2/{c}': {
            get: {
              parameters: [{ in: 'path', name: 'c', schema: { type: 'string' } }],
              responses: { '200': { content: { 'application/json': { schema: {} } } } },
            },
          },
          '/d': { post: { responses: { '200': { content: { 'application/json': { schema: {} } } } } } },
          '/e': { get: { responses: { '200': { content: { 'application/json': { schema: {} } } } } } },
        },
      },
      1000,
    );
    expect(verdict).toEqual({
      styles: ['numericIds', 'uuids', 'namesSlugs', 'nested', 'versionSegments'],
      operations: 7,
    });
    expect(assess({ swagger: '2.0', paths: {} }, 10)).toEqual({ reason: 'not OpenAPI 3.0' });
    expect(
      assess(
        {
          ...doc,
          paths: {
            ...doc.paths,
            '/files/{id}.json': { get: { responses: {} } },
            '/x': { get: {} },
            '/y': { get: {} },
            '/z': { get: {} },
          },
        },
        10,
      ),
    ).toEqual({ reason: 'a parameter inside a segment (/files/{id}.json)' });
  });

  it('takes up to 150 operations with the larger filter, 100 with the widened, 50 with the first', () => {
    const answer = { '200': { content: { 'application/json': { schema: { type: 'object' } } } } };
    const paths = (count: number) =>
      Object.fromEntries(
        Array.from({ length: count }, (_, index) => [
          `/things${index}/{id}`,
          { get: { parameters: [{ in: 'path', name: 'id', schema: { type: 'integer' } }], responses: answer } },
        ]),
      );
    const sized = (count: number) => ({ openapi: '3.0.3', info: { title: 't', version: '1' }, paths: paths(count) });
    expect(assess(sized(50), 10)).toEqual({ styles: ['numericIds'], operations: 50 });
    expect(assess(sized(51), 10)).toEqual({ reason: '51 operations' });
    expect(assess(sized(51), 10, FILTERS.widened)).toEqual({ styles: ['numericIds'], operations: 51 });
    expect(assess(sized(100), 10, FILTERS.widened)).toEqual({ styles: ['numericIds'], operations: 100 });
    expect(assess(sized(101), 10, FILTERS.widened)).toEqual({ reason: '101 operations' });
    expect(assess(sized(5), 10, FILTERS.widened)).toEqual({ reason: '5 operations' });
    expect(assess({ ...sized(10), openapi: '3.1.0' }, 10, FILTERS.widened)).toEqual({ reason: 'not OpenAPI 3.0' });
    expect(assess(sized(150), 10, FILTERS.larger)).toEqual({ styles: ['numericIds'], operations: 150 });
    expect(assess(sized(151), 10, FILTERS.larger)).toEqual({ reason: '151 operations' });
    expect(assess({ ...sized(120), openapi: '3.1.0' }, 10, FILTERS.larger)).toEqual({ reason: 'not OpenAPI 3.0' });
  });

  it('chooses by seed, one document per provider, covering the styles first', () => {
    const candidates: CorpusEntry[] = [
      { id: 'a.com/one', title: 'a1', operations: 10, styles: ['numericIds'] },
      { id: 'a.com/two', title: 'a2', operations: 10, styles: ['uuids'] },
      { id: 'b.com', title: 'b', operations: 10, styles: ['numericIds'] },
      { id: 'c.com', title: 'c', operations: 10, styles: ['namesSlugs', 'nested'] },
      { id: 'd.com', title: 'd', operations: 10, styles: ['numericIds'] },
    ];
    const chosen = selectCorpus(candidates, { seed: 1, train: 2, heldout: 1 });
    expect(selectCorpus(candidates, { seed: 1, train: 2, heldout: 1 })).toEqual(chosen);
    const ids = [...chosen.train, ...chosen.heldout].map((entry) => entry.id);
    expect(ids).toHaveLength(3);
    expect(new Set(ids.map((id) => id.split('/')[0])).size).toBe(3);
    expect(
      selectCorpus(candidates, { seed: 1, train: 2, heldout: 1, exclude: ids }).train.map((entry) => entry.id),
    ).not.toContain(ids[0]);
  });
});

describe('what the mock is given and asked', () => {
  it('leaves out operations whose path no client can request (a # or ? in it)', () => {
    const doc = {
      openapi: '3.0.3',
      paths: {
        '/send/#env/v1/transfers': { get: { responses: {} } },
        '/send/v1/transfers': { get: { responses: {} } },
      },
    };
    expect(
      listOperations(doc)
        .filter(requestable)
        .map((operation) => operation.path),
    ).toEqual(['/send/v1/transfers']);
  });

  it('serves a copy without the framing headers a document defines, and nothing when it defines none', () => {
    const doc = {
      openapi: '3.0.3',
      paths: {
        '/v1/estimate': {
          get: {
            responses: {
              200: { headers: { 'Transfer-Encoding': { schema: { type: 'string' } }, 'X-Rate': { schema: {} } } },
            },
          },
        },
      },
    };
    const served = servedCopy(doc);
    expect(Object.keys(served.paths['/v1/estimate'].get.responses[200].headers)).toEqual(['X-Rate']);
    expect(Object.keys(doc.paths['/v1/estimate'].get.responses[200].headers)).toHaveLength(2);
    expect(servedCopy(served)).toBeNull();
  });

  it('serves a copy with a media type for a format named instead, which would make the mock exit', () => {
    const doc = {
      openapi: '3.0.3',
      paths: {
        '/{source}/exports/xls': {
          get: {
            responses: { 200: { content: { xls: { schema: { type: 'string', format: 'binary' } } } } },
          },
        },
        '/reports': {
          post: {
            requestBody: { content: { 'application/json; charset=utf-8': { schema: { type: 'object' } } } },
            responses: {
              200: { content: { PDF: { schema: { type: 'string' } }, 'application/octet-stream': { schema: {} } } },
            },
          },
        },
      },
    };
    const served = servedCopy(doc);
    expect(served.paths['/{source}/exports/xls'].get.responses[200].content).toEqual({
      'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
    });
    expect(Object.keys(served.paths['/reports'].post.responses[200].content)).toEqual(['application/octet-stream']);
    expect(Object.keys(served.paths['/reports'].post.requestBody.content)).toEqual(['application/json; charset=utf-8']);
    expect(Object.keys(doc.paths['/{source}/exports/xls'].get.responses[200].content)).toEqual(['xls']);
    expect(servedCopy(served)).toBeNull();
  });
});
