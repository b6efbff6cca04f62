import { isDatabaseUnavailable, isUniqueViolation } from './pg-errors';

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a connection exception (class 08)', { code: '08006' }],
    ['the server shutting down', { code: '57P01' }],
    ['the server starting up', { code: '57P03' }],
    ['too many connections', { code: '53300' }],
    ['a refused socket wrapped by TypeORM', { message: 'query failed', driverError: { code: 'ECONNREFUSED' } }],
    ['a connection cut under a query', new Error('Connection terminated unexpectedly')],
    ['the pool giving up on a connection', new Error('timeout exceeded when trying to connect')],
  ])('is true for %s', (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', { code: '23505' }],
    ['a syntax error', { code: '42601', message: 'syntax error at or near "x"' }],
    ['an error of ours', new Error('something else')],
    ['a socket code as a message', new Error('ECONNREFUSED')],
    ['nothing', null],
    ['a string', 'Connection terminated'],
  ])('is false for %s', (label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
    // A statement's own error, not an outage: the one classifier that may say yes is the unique one.
    expect(isUniqueViolation(error)).toBe(label === 'a unique violation');
  });
});
