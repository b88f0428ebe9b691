/**
 * A2A transport: agent-card discovery and one JSON-RPC `message/send` per call,
 * over plain fetch.
 *
 * Why not the SDK's `callA2ATool`: it turns a JSON-RPC error reply into
 * `new Error("A2A agent returned error: <message>")`, dropping `code` and
 * `data.adcp_error` (so a -32029 with `retry_after` would be unreadable); it
 * takes no AbortSignal; and it sends the pre-profile DataPart
 * `{skill, parameters}` where the AdCP A2A profile v3 says `{skill, input}`
 * (the SDK's own server accepts both). The request is small enough to own.
 *
 * Every JSON-RPC request activates the AdCP A2A profile v3 (a2a-profile-extension.mdx:
 * "Clients activate the profile on every request"), so an agent that marks the profile
 * `required` takes our calls, polls and answers alike (see PROFILE_HEADERS).
 *
 * Requests go through the scoped fetch (request-signal.ts): the call's deadline
 * closes the connection, and a reply is read only up to the cap on reply size. The
 * agent card is fetched once for all the calls waiting on it (shared-attempt.ts).
 */
import { randomUUID } from 'node:crypto';
import { isJsonObject, nonEmptyString, type JsonObject } from './json.js';
import { runInOwnScope } from './call-scope.js';
import { readHttpFailure } from './http-failure.js';
import { fetchWithRequestSignal } from './request-signal.js';
import { SharedAttempt } from './shared-attempt.js';
import { signingFetch, type OutboundSigner } from './signing-fetch.js';
import { HttpStatusFailure, JsonRpcFailure } from './transport-error.js';
import { AdcpTransportError, type AgentEndpoint } from './types.js';

/**
 * A follow-up message on an open A2A task (resuming `input-required` or
 * `auth-required`, AdCP spec, task status): the task's ids from the reply that asked,
 * and our own message id for this answer.
 */
export interface A2aContinuation {
  taskId: string;
  contextId: string;
  messageId: string;
  text?: string;
}

interface Card {
  /** JSON-RPC endpoint from the card. */
  endpoint: string;
  skills: Set<string>;
}

const CARD_PATHS = ['/.well-known/agent-card.json', '/.well-known/agent.json'];

/** The AdCP A2A profile v3's extension URI (a2a-profile-extension.mdx, "Extension identifier"). */
export const ADCP_A2A_PROFILE = 'https://adcontextprotocol.org/extensions/adcp/v3';

/**
 * The profile's activation, sent with every request to the agent's interface. The page
 * names A2A 1.0's service parameter `A2A-Extensions`; our messages are A2A 0.3 JSON-RPC
 * (`message/send`, `kind` on parts), whose servers (the @a2a-js/sdk 0.3 one among them)
 * read the same parameter as `X-A2A-Extensions`, so both carry it. No `A2A-Version: 1.0`:
 * that would claim the 1.0 wire, and A2A 1.0 reads a request without it as 0.3, which
 * ours is. The agent card is fetched without them: it is where the profile is declared,
 * not the interface the page requires requests to activate it on.
 */
const PROFILE_HEADERS: Readonly<Record<string, string>> = {
  'A2A-Extensions': ADCP_A2A_PROFILE,
  'X-A2A-Extensions': ADCP_A2A_PROFILE,
};

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Card URLs to try: the URL itself if it names a card, else the well-known paths under it, then under its origin. */
export function cardUrls(agentUrl: string): string[] {
  if (/\/\.well-known\/agent(-card)?\.json$/i.test(agentUrl)) return [agentUrl];
  const base = agentUrl.replace(/\/+$/, '');
  const origin = new URL(agentUrl).origin;
  const urls = CARD_PATHS.map((p) => base + p);
  if (base !== origin) urls.push(...CARD_PATHS.map((p) => origin + p));
  return urls;
}

function headersFor(agent: AgentEndpoint, target: string): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  // The token was registered for the agent's origin; a card pointing its endpoint
  // elsewhere does not get it (the call then fails with a visible 401).
  if (agent.authToken && new URL(target).origin === new URL(agent.url).origin) {
    headers.authorization = `Bearer ${agent.authToken}`;
    headers['x-adcp-auth'] = agent.authToken;
  }
  return headers;
}

export class A2aTransport {
  private readonly cards = new Map<string, SharedAttempt<Card>>();
  /** Each request tied to the call it is made for, its reply counted against the cap, signed when the seller asks (signing-fetch.ts). */
  private readonly scopedFetch: Fetch;

  constructor(private readonly opts: { maxReplyBytes: number; signer?: OutboundSigner }) {
    this.scopedFetch = fetchWithRequestSignal(signingFetch((input, init) => fetch(input, init), opts.signer));
  }

  private card(agent: AgentEndpoint, signal: AbortSignal): Promise<Card> {
    let pending = this.cards.get(agent.url);
    if (!pending) {
      // In a scope of its own: the card is shared by every call waiting on it.
      const created = new SharedAttempt((own) => runInOwnScope(own, this.opts.maxReplyBytes, () => this.readCard(agent)));
      created.promise.catch(() => {
        if (this.cards.get(agent.url) === created) this.cards.delete(agent.url);
      });
      this.cards.set(agent.url, created);
      pending = created;
    }
    return pending.join(signal);
  }

  private async readCard(agent: AgentEndpoint): Promise<Card> {
    let lastStatus: number | undefined;
    for (const url of cardUrls(agent.url)) {
      const response = await this.scopedFetch(url, { headers: headersFor(agent, url) });
      if (!response.ok) {
        lastStatus = response.status;
        const failure = await readHttpFailure(response);
        if (response.status === 401 || response.status === 403) throw new HttpStatusFailure(failure);
        continue;
      }
      const card: unknown = await response.json();
      if (!isJsonObject(card)) break;
      const endpoint = nonEmptyString(card.url) ?? agent.url;
      const skills = new Set<string>();
      if (Array.isArray(card.skills)) {
        for (const s of card.skills) {
          const id = isJsonObject(s) ? nonEmptyString(s.id) ?? nonEmptyString(s.name) : undefined;
          if (id) skills.add(id);
        }
      }
      return { endpoint: new URL(endpoint, url).toString(), skills };
    }
    throw new AdcpTransportError(`no A2A agent card found for agent (last HTTP ${lastStatus ?? 'n/a'})`, 'protocol', lastStatus);
  }

  /**
   * Send one AdCP task as an A2A message and return the JSON-RPC `result` (a
   * Task or a Message) untouched. JSON-RPC and HTTP errors are thrown as
   * JsonRpcFailure / HttpStatusFailure with everything they carried.
   */
  async send(
    agent: AgentEndpoint,
    skill: string,
    input: Record<string, unknown>,
    signal: AbortSignal,
    continuation?: A2aContinuation,
  ): Promise<unknown> {
    const { endpoint } = await this.card(agent, signal);
    const parts: unknown[] = [{ kind: 'data', data: { skill, input } }];
    // A person's note rides beside the input as text; the DataPart stays the only data.
    if (continuation?.text) parts.unshift({ kind: 'text', text: continuation.text });
    const body = {
      jsonrpc: '2.0',
      id: randomUUID(),
      method: 'message/send',
      params: {
        message: {
          kind: 'message',
          role: 'user',
          // A continuation keeps its stored message id, so a resend is the same message.
          messageId: continuation?.messageId ?? randomUUID(),
          ...(continuation ? { taskId: continuation.taskId, contextId: continuation.contextId } : {}),
          parts,
        },
      },
    };
    const response = await this.scopedFetch(endpoint, {
      method: 'POST',
      headers: { ...headersFor(agent, endpoint), ...PROFILE_HEADERS },
      body: JSON.stringify(body),
      signal,
    });
    if (!response.ok) throw new HttpStatusFailure(await readHttpFailure(response));
    const reply: unknown = await response.json();
    if (!isJsonObject(reply)) throw new AdcpTransportError('A2A reply is not a JSON object', 'protocol');
    const error = reply.error;
    if (isJsonObject(error)) {
      const code = typeof error.code === 'number' ? error.code : 0;
      throw new JsonRpcFailure(code, typeof error.message === 'string' ? error.message : 'JSON-RPC error', error.data);
    }
    if (!('result' in reply)) throw new AdcpTransportError('A2A reply has neither result nor error', 'protocol');
    return reply.result as JsonObject;
  }

  async skills(agent: AgentEndpoint, signal: AbortSignal): Promise<Set<string>> {
    return (await this.card(agent, signal)).skills;
  }

  async close(): Promise<void> {
    this.cards.clear();
  }
}
