/**
 * Turns a stored agent into what the AdCP adapter needs, unsealing its token only for the call.
 *
 * Unsealed tokens are memoised by their sealed value (every send and poll needs one and
 * opening costs an AES-GCM decryption): a new token is a new sealed value, so a changed
 * credential is never served from here. Bounded; in memory only, never logged.
 */
import type { AgentCapabilities } from '../adcp/capabilities.js';
import { chooseDialect, DIALECT_3_0, type AgentDialect } from '../adcp/dialect.js';
import { sellerSigning, type SellerSigning } from '../adcp/signing-policy.js';
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
    dialect: dialectOf(agent),
    ...signingOf(agent),
  };
}

const dialects = new Map<string, AgentDialect>();
const signings = new Map<string, { signing?: SellerSigning }>();

/**
 * What the agent declared of request signing, with the wire profile of the version we
 * speak with it (src/adcp/signing-policy.ts): absent when it declared none. Memoised by
 * the capabilities' text, like the dialect.
 */
function signingOf(agent: Pick<AgentRow, 'capabilities'>): { signing?: SellerSigning } {
  const text = agent.capabilities;
  if (!text) return {};
  let entry = signings.get(text);
  if (!entry) {
    const signing = sellerSigning(JSON.parse(text) as AgentCapabilities, dialectOf(agent));
    entry = signing ? { signing } : {};
    setBounded(signings, text, entry, MAX_TOKENS);
  }
  return entry;
}

/**
 * The dialect we speak with a stored agent, from what it declared (src/adcp/dialect.ts).
 * Its capabilities were checked when stored; memoised by their text (every send and poll
 * asks), a changed declaration being a new text.
 */
export function dialectOf(agent: Pick<AgentRow, 'capabilities'>): AgentDialect {
  const text = agent.capabilities;
  if (!text) return DIALECT_3_0;
  let dialect = dialects.get(text);
  if (!dialect) {
    dialect = chooseDialect(JSON.parse(text) as AgentCapabilities).dialect;
    setBounded(dialects, text, dialect, MAX_TOKENS);
  }
  return dialect;
}
