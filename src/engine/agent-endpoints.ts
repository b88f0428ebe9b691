/**
 * Turns a stored agent into what the AdCP adapter needs, unsealing its token only for the call.
 *
 * Unsealed tokens are memoised by their sealed value (every send and poll needs one and
 * opening costs an AES-GCM decryption): a new token is a new sealed value, so a changed
 * credential is never served from here. Bounded; in memory only, never logged.
 */
import type { AgentEndpoint } from '../adcp/types.js';
import type { AgentRow } from '../store/index.js';
import type { SecretBox } from '../store/secret-box.js';
import { setBounded } from '../bounded-map.js';

const MAX_TOKENS = 256;
const opened = new WeakMap<SecretBox, Map<string, string>>();

function openToken(sealed: string, secrets: SecretBox): string {
  let memo = opened.get(secrets);
  if (!memo) opened.set(secrets, (memo = new Map()));
  let token = memo.get(sealed);
  if (token === undefined) {
    token = secrets.open(sealed);
    setBounded(memo, sealed, token, MAX_TOKENS);
  }
  return token;
}

export function endpointFor(agent: AgentRow, secrets: SecretBox): AgentEndpoint {
  return {
    url: agent.url,
    protocol: agent.protocol as AgentEndpoint['protocol'],
    authToken: agent.auth_token_enc ? openToken(agent.auth_token_enc, secrets) : undefined,
  };
}
