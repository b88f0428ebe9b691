import { describe, expect, it } from 'vitest';
import { capturedLogger as capture } from '../helpers/log-capture.js';

const S = 'S3CRET-value-0123456789';

describe('the logger', () => {
  it('redacts every shape a secret could be logged in, at any level', () => {
    const { log, text } = capture();
    log.debug({ headers: { authorization: `Bearer ${S}`, 'x-adcp-auth': S, cookie: `s=${S}` } }, 'a');
    log.info({ agent: { authToken: S, auth_token_enc: S }, operation: { webhook_secret_enc: S, webhook_token: S, request_body: S } }, 'b');
    log.warn({ token: S, apiKey: S, secret: S, config: { ADCP_ORCH_SECRET_KEY: S, ADCP_ORCH_API_KEY: S } }, 'c');
    log.error({ request: { push_notification_config: { authentication: { credentials: S } } }, credentials: S }, 'd');
    const out = text();
    expect(out).not.toContain(S);
    expect(out.match(/\[redacted\]/g)).toHaveLength(15);
    expect(out).toContain('"msg":"d"');
  });

  it('logs a request without its headers, and a webhook URL without its token', () => {
    const { log, text } = capture();
    log.info({ req: { method: 'POST', url: `/webhooks/adcp/${S}?x=1`, headers: { authorization: `Bearer ${S}` }, id: 'req-1' } }, 'r');
    const line = JSON.parse(text());
    expect(line.req).toEqual({ method: 'POST', url: '/webhooks/adcp/[redacted]?x=1', id: 'req-1' });
  });
});
