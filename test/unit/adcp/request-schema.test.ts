/**
 * The check of our requests against the agent's AdCP schema: what it finds, how it
 * names it, and that a request it refuses never reaches the wire.
 */
import { describe, expect, it } from 'vitest';
import { createAdcpClient } from '../../../src/adcp/client.js';
import { requestInvalidError, requestIssues } from '../../../src/adcp/request-schema.js';
import { AdcpTransportError } from '../../../src/adcp/types.js';

const KEY = '3f5e1c7a-2b4d-4e6f-8a9b-0c1d2e3f4a5b';

function create(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    idempotency_key: KEY,
    account: { account_id: 'acc_1' },
    brand: { domain: 'brand.example' },
    start_time: 'asap',
    end_time: '2027-01-31T23:59:59Z',
    packages: [{ product_id: 'p1', pricing_option_id: 'cpm', budget: 1000 }],
    ...extra,
  };
}

describe('requestIssues', () => {
  it('passes a valid request and knows nothing of a task without a schema', () => {
    expect(requestIssues('create_media_buy', create())).toEqual([]);
    expect(requestIssues('tasks/get', { task_id: 't1', include_result: true })).toEqual([]);
    expect(requestIssues('sandbox_respond', { anything: true })).toBeNull();
    expect(requestIssues('create_media_buy', create(), '9.9')).toBeNull();
  });

  it('names a missing field by its pointer', () => {
    const rw = { url: 'https://us.example/webhooks/adcp/reporting/t', reporting_frequency: 'daily' };
    expect(requestIssues('create_media_buy', create({ reporting_webhook: rw }))).toEqual([{ pointer: '/reporting_webhook/authentication', message: 'is required', keyword: 'required' }]);
  });

  it('names a field a closed request does not allow, and a value outside its enum', () => {
    const check = { plan_id: 'p', caller: 'https://us.example', tool: 'create_media_buy', payload: {}, target_agent: 'https://seller.example' };
    expect(requestIssues('check_governance', check)).toEqual([{ pointer: '/target_agent', message: 'is not a field the schema allows here', keyword: 'additionalProperties' }]);
    const rw = { url: 'https://us.example/r', reporting_frequency: 'weekly', authentication: { schemes: ['HMAC-SHA256'], credentials: 'c'.repeat(40) } };
    expect(requestIssues('create_media_buy', create({ reporting_webhook: rw }))).toEqual([{ pointer: '/reporting_webhook/reporting_frequency', message: 'must be one of: "hourly", "daily", "monthly"', keyword: 'enum' }]);
  });

  it('reports the branch of a union the request meant, not every branch', () => {
    // An account by brand and operator, the operator left out: not "must match exactly one schema" and the account_id branch's complaints.
    expect(requestIssues('create_media_buy', create({ account: { brand: { domain: 'brand.example' } } }))).toEqual([{ pointer: '/account/operator', message: 'is required', keyword: 'required' }]);
  });
});

describe('requestInvalidError', () => {
  it('is null for a valid request, and a correctable REQUEST_INVALID of ours naming every issue otherwise', () => {
    expect(requestInvalidError('create_media_buy', create())).toBeNull();
    const error = requestInvalidError('create_media_buy', create({ idempotency_key: 'short', packages: [] }));
    expect(error).toMatchObject({ code: 'REQUEST_INVALID', recovery: 'correctable', details: { side: 'ours', adcp_version: '3.0' } });
    expect((error!.details as { issues: Array<{ pointer: string; message: string }> }).issues).toEqual([
      { pointer: '/idempotency_key', message: 'must NOT have fewer than 16 characters' },
      { pointer: '/idempotency_key', message: 'must match pattern "^[A-Za-z0-9_.:-]{16,255}$"' },
      { pointer: '/packages', message: 'must NOT have fewer than 1 items' },
    ]);
    expect(error!.message).toMatch(/^our create_media_buy request is not valid for AdCP 3\.0 \(\/idempotency_key .*\); nothing was sent$/);
  });
});

describe('the client refuses a request off the schema, unsent', () => {
  it('rejects with request_invalid before any connection is made', async () => {
    const client = createAdcpClient({ callTimeoutMs: 2000 });
    // Nothing listens here: had the call been sent, it would fail as a network error instead.
    const agent = { url: 'http://127.0.0.1:9/mcp', protocol: 'mcp' as const };
    try {
      const refused = await client.callTask(agent, 'create_media_buy', create({ packages: 'none' })).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(AdcpTransportError);
      expect((refused as AdcpTransportError).kind).toBe('request_invalid');
      expect((refused as AdcpTransportError).adcpError).toMatchObject({ code: 'REQUEST_INVALID', details: { issues: [{ pointer: '/packages', message: 'must be array' }] } });
      // Told it was checked already (or is a resend), the client sends it as it is: here, to no one.
      const sent = await client.callTask(agent, 'create_media_buy', create({ packages: 'none' }), { requestChecked: true }).catch((e: unknown) => e);
      expect((sent as AdcpTransportError).kind).toBe('network');
    } finally {
      await client.close();
    }
  });
});
