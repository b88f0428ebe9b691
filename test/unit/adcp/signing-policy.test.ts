/**
 * Which requests are signed (signing-policy.ts), read from the exact JSON-RPC body:
 * listed operations, listed protocol methods (never across namespaces), webhook
 * credentials to a seller that verifies signatures, and the content-digest choice.
 */
import { describe, expect, it } from 'vitest';
import { sellerSigning, signingDecision, type RequestSigningDeclaration, type SellerSigning } from '../../../src/adcp/signing-policy.js';
import { DIALECT_3_0 } from '../../../src/adcp/dialect.js';

const legacy = (declaration: RequestSigningDeclaration): SellerSigning => ({ declaration, profile: 'legacy' });
const tool = (name: string, args: Record<string, unknown> = {}) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
const a2a = (skill: string, input: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: '2.0', id: 'x', method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: 'm', parts: [{ kind: 'data', data: { skill, input } }] } } });
const pnc = { push_notification_config: { url: 'https://buyer.example/wh', authentication: { schemes: ['HMAC-SHA256'], credentials: 'x'.repeat(32) } } };

describe('signingDecision', () => {
  it('signs an operation listed in required_for, warn_for or supported_for, over MCP and A2A', () => {
    for (const list of ['required_for', 'warn_for', 'supported_for'] as const) {
      const seller = legacy({ supported: true, [list]: ['create_media_buy'] });
      expect(signingDecision(tool('create_media_buy'), seller)).toMatchObject({ sign: true, coverContentDigest: true });
      expect(signingDecision(a2a('create_media_buy'), seller)).toMatchObject({ sign: true });
      expect(signingDecision(tool('get_products'), seller)).toEqual({ sign: false });
    }
  });

  it('signs nothing for a seller that declared no request signing, or a body it cannot read', () => {
    expect(signingDecision(tool('create_media_buy', pnc), undefined)).toEqual({ sign: false });
    expect(signingDecision('not json', legacy({ supported: true, required_for: ['create_media_buy'] }))).toEqual({ sign: false });
    expect(sellerSigning(null, DIALECT_3_0)).toBeUndefined();
  });

  it('matches protocol methods on the JSON-RPC method only, never a tool of that name', () => {
    const seller = legacy({ supported: true, protocol_methods_required_for: ['tasks/cancel'] });
    expect(signingDecision(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/cancel', params: { taskId: 't' } }), seller)).toMatchObject({ sign: true });
    expect(signingDecision(tool('tasks/cancel'), seller)).toEqual({ sign: false });
    // And an operation list never matches a protocol method.
    expect(signingDecision(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/cancel' }), legacy({ supported: true, required_for: ['tasks/cancel'] }))).toEqual({ sign: false });
    expect(signingDecision(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize' }), seller)).toEqual({ sign: false });
  });

  it('signs a request registering webhook credentials to a seller that verifies signatures (the downgrade rule)', () => {
    const seller = legacy({ supported: true, required_for: [] });
    expect(signingDecision(tool('update_media_buy', pnc), seller)).toMatchObject({ sign: true, why: 'the request registers webhook credentials' });
    expect(signingDecision(tool('create_media_buy', { reporting_webhook: { url: 'https://b/r', authentication: { schemes: ['HMAC-SHA256'], credentials: 's' } } }), seller)).toMatchObject({ sign: true });
    expect(signingDecision(tool('sync_accounts', { accounts: [{ notification_configs: [{ url: 'https://b/n', authentication: { schemes: ['Bearer'], credentials: 't' } }] }] }), seller)).toMatchObject({ sign: true });
    expect(signingDecision(a2a('create_media_buy', pnc), seller)).toMatchObject({ sign: true });
    // Without credentials (RFC 9421 webhooks), or to a seller that does not verify, nothing to protect.
    expect(signingDecision(tool('create_media_buy', { push_notification_config: { url: 'https://b/w', authentication: {} } }), seller)).toEqual({ sign: false });
    expect(signingDecision(tool('create_media_buy', { push_notification_config: { url: 'https://b/w' } }), seller)).toEqual({ sign: false });
    expect(signingDecision(tool('create_media_buy', pnc), legacy({ supported: false }))).toEqual({ sign: false });
  });

  it('covers content-digest as covers_content_digest says, and always under the 3.2 profile', () => {
    const decl = (covers: 'required' | 'forbidden' | 'either' | undefined): RequestSigningDeclaration => ({ supported: true, required_for: ['create_media_buy'], ...(covers && { covers_content_digest: covers }) });
    expect(signingDecision(tool('create_media_buy'), legacy(decl('required')))).toMatchObject({ coverContentDigest: true });
    expect(signingDecision(tool('create_media_buy'), legacy(decl('either')))).toMatchObject({ coverContentDigest: true });
    expect(signingDecision(tool('create_media_buy'), legacy(decl(undefined)))).toMatchObject({ coverContentDigest: true });
    expect(signingDecision(tool('create_media_buy'), legacy(decl('forbidden')))).toMatchObject({ coverContentDigest: false });
    expect(signingDecision(tool('create_media_buy'), { declaration: decl('forbidden'), profile: 'rfc8941' })).toMatchObject({ coverContentDigest: true });
  });

  it('picks the wire profile from the version we speak', () => {
    const caps = { request_signing: { supported: true } };
    expect(sellerSigning(caps, DIALECT_3_0)?.profile).toBe('legacy');
    expect(sellerSigning(caps, { ...DIALECT_3_0, version: '3.1', release: '3.1' })?.profile).toBe('legacy');
    expect(sellerSigning(caps, { ...DIALECT_3_0, version: '3.2', release: '3.2-beta.5' })?.profile).toBe('rfc8941');
  });
});
