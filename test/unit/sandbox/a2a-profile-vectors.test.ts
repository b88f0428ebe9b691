/**
 * Every vector of a2a-profile-extension-v3.json through the rule that judges it here:
 * invocation vectors through the sandbox seller's own profile check (what a seller that
 * requires the profile lets through or refuses, and with which A2A error), advertisement
 * and response vectors through the rules the integration tests judge the sandbox's card
 * and replies by (test/helpers/a2a-profile-vectors.ts), so those rules are the spec's.
 * Traffic of our client and of the sandbox is judged in test/integration/a2a-profile-vectors.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ADCP_A2A_PROFILE as CLIENT_URI } from '../../../src/adcp/a2a-transport.js';
import { ADCP_A2A_PROFILE as SANDBOX_URI, EXTENSION_SUPPORT_REQUIRED, profileRefusal } from '../../../src/sandbox/a2a-profile.js';
import { advertisementError, loadProfileVectors, responseError, toA2a03Message } from '../../helpers/a2a-profile-vectors.js';

const vectors = loadProfileVectors();

describe('a2a-profile-extension-v3.json', () => {
  it('names the extension URI our client activates and the sandbox requires', () => {
    expect(vectors.version).toBe('3.0.0');
    expect(CLIENT_URI).toBe(vectors.extension_uri);
    expect(SANDBOX_URI).toBe(vectors.extension_uri);
  });

  describe('invocation vectors: the sandbox check', () => {
    // HTTP header names are case-insensitive; Node hands them over in lower case.
    const headersOf = (h: Record<string, string>) => Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
    const cases = vectors.invocation_vectors.map((v) => [v.id, v] as const);

    it.each(cases)('%s (A2A 0.3 form, as the sandbox receives it)', (_id, v) => {
      const refused = profileRefusal(headersOf(v.headers), { jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: toA2a03Message(v.message) } });
      if (v.valid) return expect(refused).toBeUndefined();
      expect(refused?.reason).toBe(v.expected_error);
      // Not activated: A2A's ExtensionSupportRequiredError; activated but malformed: invalid params.
      expect(refused?.code).toBe(v.expected_error === 'extension_not_activated' ? EXTENSION_SUPPORT_REQUIRED : -32602);
    });

    it.each(cases)('%s (A2A 1.0 form, as the vector writes it)', (_id, v) => {
      const refused = profileRefusal(headersOf(v.headers), { jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: v.message } });
      expect(refused?.reason).toBe(v.valid ? undefined : v.expected_error);
    });

    it('every JSON-RPC method must activate the profile, tasks/get as much as message/send', () => {
      expect(profileRefusal({}, { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 't' } })?.code).toBe(EXTENSION_SUPPORT_REQUIRED);
      expect(profileRefusal({ 'a2a-extensions': vectors.extension_uri }, { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 't' } })).toBeUndefined();
      // A2A 0.3's name for the same service parameter.
      expect(profileRefusal({ 'x-a2a-extensions': `https://example.com/other/v1, ${vectors.extension_uri}` }, { method: 'tasks/get' })).toBeUndefined();
      expect(profileRefusal({ 'a2a-extensions': 'https://adcontextprotocol.org/extensions/adcp/v2' }, { method: 'tasks/get' })?.reason).toBe('extension_not_activated');
    });
  });

  describe('advertisement vectors: the card rule', () => {
    it.each(vectors.advertisement_vectors.map((v) => [v.id, v] as const))('%s', (_id, v) => {
      expect(advertisementError(v.agent_card, vectors.extension_uri)).toBe(v.valid ? null : v.expected_error);
    });
  });

  describe('response vectors: the response rule', () => {
    it.each(vectors.response_vectors.map((v) => [v.id, v] as const))('%s', (_id, v) => {
      expect(responseError(v.response, v.handler_return, v.expected_adcp_task_id)).toBe(v.valid ? null : v.expected_error);
    });
  });
});
