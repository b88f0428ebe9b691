/** HTTP and JSON-RPC failures become AdcpTransportError with the AdCP error they carried. */
import { describe, expect, it } from 'vitest';
import { httpFailureError, parseRetryAfterHeader } from '../../../src/adcp/http-failure.js';
import { HttpStatusFailure, JsonRpcFailure, toTransportError } from '../../../src/adcp/transport-error.js';
import { clampRetryAfter } from '../../../src/adcp/recovery.js';

describe('retry_after', () => {
  it.each([
    [0, 1],
    [0.4, 1],
    [5, 5],
    [5.2, 6],
    [86400, 3600],
    [-3, 1],
    ['12', 12],
  ])('%s → %s', (input, out) => expect(clampRetryAfter(input)).toBe(out));

  it('ignores non-numbers', () => {
    expect(clampRetryAfter('soon')).toBeUndefined();
    expect(clampRetryAfter(Number.NaN)).toBeUndefined();
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfterHeader('30')).toBe(30);
    const now = Date.parse('2026-08-20T10:00:00Z');
    expect(parseRetryAfterHeader('Thu, 20 Aug 2026 10:00:42 GMT', now)).toBe(42);
    expect(parseRetryAfterHeader(null)).toBeUndefined();
  });
});

describe('httpFailureError', () => {
  it('a bare 429 is RATE_LIMITED with the Retry-After header', () => {
    expect(httpFailureError({ status: 429, body: 'slow down', retryAfterSeconds: 9 })).toEqual({
      code: 'RATE_LIMITED',
      recovery: 'transient',
      retryAfterSeconds: 9,
      details: { http_status: 429 },
    });
  });

  it('a JSON-RPC error body wins over the status', () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32027, message: 'x', data: { adcp_error: { code: 'SERVICE_UNAVAILABLE', retry_after: 30 } } } });
    expect(httpFailureError({ status: 503, body, retryAfterSeconds: 5 })).toEqual({ code: 'SERVICE_UNAVAILABLE', recovery: 'transient', retryAfterSeconds: 30 });
  });

  it('a 404 carries no AdCP meaning', () => {
    expect(httpFailureError({ status: 404, body: 'nope' })).toBeUndefined();
  });
});

describe('toTransportError', () => {
  it('maps each failure to its kind', () => {
    expect(toTransportError(new Error('aborted'), { timedOut: true, timeoutMs: 50 }).kind).toBe('timeout');
    const http = toTransportError(new HttpStatusFailure({ status: 502 }), { timedOut: false });
    expect([http.kind, http.httpStatus, http.adcpError?.code]).toEqual(['http', 502, 'SERVICE_UNAVAILABLE']);
    const rpc = toTransportError(new JsonRpcFailure(-32029, 'rate', { adcp_error: { code: 'RATE_LIMITED', retry_after: 10 } }), { timedOut: false });
    expect([rpc.kind, rpc.adcpError?.retryAfterSeconds]).toEqual(['rpc', 10]);
    const net = toTransportError(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }), { timedOut: false });
    expect(net.kind).toBe('network');
  });
});
