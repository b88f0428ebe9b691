/**
 * The API's answer when the database is away: 503 `database_unavailable` with Retry-After,
 * counted under where it happened (api or webhook), for a typed error and for a raw driver
 * error alike; any other error is still a 500.
 */
import Fastify from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandling } from '../../../src/api/errors.js';
import { DatabaseOutage, RETRY_AFTER_S } from '../../../src/engine/database-outage.js';
import { DatabaseUnavailableError } from '../../../src/store/db-errors.js';

describe('API errors when the database is away', () => {
  const counted: string[] = [];
  const app = Fastify();
  const outage = new DatabaseOutage(pino({ level: 'silent' }), { databaseUnavailable: (where) => void counted.push(where) }, { now: Date.now, random: Math.random });

  beforeAll(async () => {
    installErrorHandling(app, outage);
    app.get('/v1/typed', async () => {
      throw new DatabaseUnavailableError('connection refused');
    });
    app.get('/v1/sqlite-busy', async () => {
      throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    });
    app.post('/webhooks/adcp/:token', async () => {
      throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    });
    app.get('/v1/bug', async () => {
      throw new Error('a bug');
    });
    await app.ready();
  });
  afterAll(() => app.close());

  it.each([
    ['GET', '/v1/typed', 'api'],
    ['GET', '/v1/sqlite-busy', 'api'],
    ['POST', '/webhooks/adcp/tok', 'webhook'],
  ])('%s %s answers 503 database_unavailable with Retry-After, counted under %s', async (method, url, where) => {
    counted.length = 0;
    const res = await app.inject({ method: method as 'GET' | 'POST', url });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe(String(RETRY_AFTER_S));
    expect(res.json()).toEqual({ error: { code: 'database_unavailable', message: expect.stringMatching(/database is unavailable/) } });
    // Nothing of the driver's text reaches the client.
    expect(res.body).not.toMatch(/locked|administrator|refused/);
    expect(counted).toEqual([where]);
  });

  it('still answers 500 internal_error for anything else, uncounted', async () => {
    counted.length = 0;
    const res = await app.inject({ method: 'GET', url: '/v1/bug' });
    expect(res.statusCode).toBe(500);
    expect(res.json().error.code).toBe('internal_error');
    expect(counted).toEqual([]);
  });
});
