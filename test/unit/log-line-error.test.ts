/**
 * A log line says of an error its name, code and message only — and the message bounded: a
 * library's error may carry a stack trace or a whole response body in its message text.
 */
import { describe, expect, it } from 'vitest';
import { formatLogLine, logLineProblems, LOG_MESSAGE_LIMIT } from '../../src/deployment/log-line';

const lineWith = (error: unknown) => JSON.parse(formatLogLine({ level: 'error', msg: 'poll run failed', deployment: 'd', timestamp: 1, error })) as { error: Record<string, unknown> };

describe('log line errors', () => {
  it('drops the stack frames a message embeds, and joins its other lines onto one', () => {
    const error = new Error('upstream said no\n    at handler (/srv/app/x.js:1:1)\n    at run (/srv/app/y.js:2:2)');
    const { error: logged } = lineWith(error);
    expect(logged).toEqual({ name: 'Error', message: 'upstream said no' });
    const listed = new Error('invalid publish API producer tokens:\n  SHOP_TOKEN: environment variable is not set');
    expect(lineWith(listed).error.message).toBe('invalid publish API producer tokens: SHOP_TOKEN: environment variable is not set');
  });

  it('caps a long message, from a thrown Error or an already described one', () => {
    const body = 'x'.repeat(10_000);
    for (const error of [new TypeError(body), { name: 'HttpError', code: 'E_HTTP', message: body }]) {
      const { error: logged } = lineWith(error);
      expect(String(logged.message)).toHaveLength(LOG_MESSAGE_LIMIT + 1);
      expect(String(logged.message).endsWith('…')).toBe(true);
    }
  });

  it('leaves a short message as it is and the line valid', () => {
    const text = formatLogLine({ level: 'error', msg: 'poll run failed', deployment: 'd', timestamp: 1, error: Object.assign(new Error('redis unreachable: 127.0.0.1:6390 refused the connection'), { code: 'REDIS_UNAVAILABLE' }) });
    expect(JSON.parse(text).error.message).toBe('redis unreachable: 127.0.0.1:6390 refused the connection');
    expect(logLineProblems(JSON.parse(text))).toEqual([]);
  });
});
