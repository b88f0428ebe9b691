/** Turns a stored agent into what the AdCP adapter needs, unsealing its token only for the call. */
import type { AgentEndpoint } from '../adcp/types.js';
import type { AgentRow } from '../store/index.js';
import type { SecretBox } from '../store/secret-box.js';

export function endpointFor(agent: AgentRow, secrets: SecretBox): AgentEndpoint {
  return {
    url: agent.url,
    protocol: agent.protocol as AgentEndpoint['protocol'],
    authToken: agent.auth_token_enc ? secrets.open(agent.auth_token_enc) : undefined,
  };
}
