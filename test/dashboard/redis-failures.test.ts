/**
 * A data section never turns a Redis failure into an answer ("no dead letters", "not
 * found"): the error reaches the shell's error handler, which answers 503. The port here
 * fails every exchange the way the real ports do when Redis is unreachable.
 */
import { describe, expect, it } from 'vitest';
import { dataSections } from '../../src/dashboard/sections';
import { RedisUnavailableError, errorCode } from '../../src/ground/errors';
import type { RedisPort } from '../../src/redis/port';
import { dashboardDeployment, dashboardRuntime, mounted, ordersOf } from './fixture';

const unreachable: RedisPort = {
  transport: 'tcp',
  cluster: false,
  exchange: () => Promise.reject(new RedisUnavailableError('connection refused')),
  close: () => Promise.resolve(),
};

describe('data sections when Redis is unreachable', () => {
  const config = dashboardDeployment('down');
  const runtime = dashboardRuntime(config, unreachable);
  const orders = encodeURIComponent(ordersOf(config));
  const requests: Array<[keyof typeof dataSections, string, RequestInit?]> = [
    ['dlt', '/ops/dlt'],
    ['dlt', `/ops/dlt/record?stream=${orders}&id=1-1`],
    ['dlt', `/ops/dlt/redrive?stream=${orders}&reason=order_unknown`],
    ['dlt', '/ops/dlt/redrive', { method: 'POST', body: new URLSearchParams({ stream: ordersOf(config), id: '1-1' }) }],
    ['find', '/ops/find?id=e1'],
    ['find', '/ops/find?id=1-1'],
    ['saga', '/ops/saga/i1'],
    ['schedule', '/ops/schedule'],
    ['schedule', `/ops/schedule/cancel?stream=${orders}&event_id=e1`],
    ['schedule', '/ops/schedule/cancel', { method: 'POST', body: new URLSearchParams({ stream: ordersOf(config), event_id: 'e1' }) }],
  ];

  it.each(requests)('%s %s hands the error to the shell', async (name, path, init) => {
    const app = mounted(dataSections[name], name, runtime);
    const seen: unknown[] = [];
    app.onError((error, c) => {
      seen.push(error);
      return c.text('unavailable', 503);
    });
    const response = await app.request(path, init);
    expect(response.status).toBe(503);
    expect(seen.map(errorCode)).toEqual(['REDIS_UNAVAILABLE']);
  });
});
