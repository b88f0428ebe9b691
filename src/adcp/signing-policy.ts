/**
 * Which of our requests to a seller are signed, and how, from what the seller
 * declared (`request_signing` in get_adcp_capabilities, capabilities.ts) and the
 * version we speak with it (dialect.ts). Read from the exact body about to be sent:
 *
 * - an AdCP operation (MCP `tools/call` `params.name`, A2A `message/send` DataPart
 *   `skill`) listed in `required_for`, `warn_for` or `supported_for`;
 * - a JSON-RPC protocol method (`tasks/cancel`, …) listed in `protocol_methods_*`,
 *   matched on the envelope's `method` only, never on a tool name (the spec keeps the
 *   two namespaces apart);
 * - to a seller with `supported: true`, any request whose arguments carry a non-empty
 *   `push_notification_config.authentication` or `accounts[].notification_configs[].authentication`
 *   (the spec's downgrade rule: such a seller refuses it unsigned), and
 *   `reporting_webhook.authentication` (sellers built on the SDK from 9.4 apply the same rule).
 *
 * `content-digest` is covered as `covers_content_digest` says: `forbidden` never,
 * `required` always, `either` (or unsaid) always too, since binding the body is what
 * protects a spend. AdCP 3.2 covers it on every request with a body, whatever the
 * seller says.
 */
import type { AgentCapabilities } from './capabilities.js';
import type { AgentDialect } from './dialect.js';
import { isJsonObject } from './json.js';
import type { SigningProfile } from './request-signing.js';

export type RequestSigningDeclaration = NonNullable<AgentCapabilities['request_signing']>;

/** What the adapter knows of a seller's signing, carried on its AgentEndpoint. */
export interface SellerSigning {
  declaration: RequestSigningDeclaration;
  profile: SigningProfile;
}

export type SigningDecision = { sign: false } | { sign: true; coverContentDigest: boolean; why: string };

const NO: SigningDecision = { sign: false };
/** Deeper than any AdCP request; a deeper body is not walked further. */
const MAX_DEPTH = 32;

/** The seller's signing as the adapter needs it, or undefined when it declared none. */
export function sellerSigning(capabilities: Pick<AgentCapabilities, 'request_signing'> | null, dialect: AgentDialect): SellerSigning | undefined {
  const declaration = capabilities?.request_signing;
  if (!declaration) return undefined;
  return { declaration, profile: dialect.version === '3.2' ? 'rfc8941' : 'legacy' };
}

/** The decision for one request body (JSON-RPC text). A body we cannot read is not signed. */
export function signingDecision(body: string | undefined, seller: SellerSigning | undefined): SigningDecision {
  if (!seller || !body) return NO;
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return NO;
  }
  // A JSON-RPC batch is signed when any of its messages would be.
  const messages = Array.isArray(message) ? message : [message];
  for (const m of messages) {
    const why = reasonToSign(m, seller.declaration);
    if (why) return { sign: true, coverContentDigest: coverDigest(seller), why };
  }
  return NO;
}

function coverDigest(seller: SellerSigning): boolean {
  if (seller.profile === 'rfc8941') return true;
  return seller.declaration.covers_content_digest !== 'forbidden';
}

function listed(list: readonly string[] | undefined, name: string): boolean {
  return list?.includes(name) ?? false;
}

function reasonToSign(message: unknown, d: RequestSigningDeclaration): string | undefined {
  if (!isJsonObject(message) || typeof message.method !== 'string') return undefined;
  const call = adcpCall(message);
  if (!call) {
    const method = message.method;
    if (listed(d.protocol_methods_required_for, method) || listed(d.protocol_methods_warn_for, method) || listed(d.protocol_methods_supported_for, method)) {
      return `protocol method ${method} is listed`;
    }
    return undefined;
  }
  const op = call.operation;
  if (op && (listed(d.required_for, op) || listed(d.warn_for, op) || listed(d.supported_for, op))) return `${op} is listed`;
  if (d.supported === true && carriesWebhookAuthentication(call.args, MAX_DEPTH)) return 'the request registers webhook credentials';
  return undefined;
}

/** The AdCP operation and its arguments, for an MCP tool call or an A2A skill invocation. */
function adcpCall(message: Record<string, unknown>): { operation?: string; args: unknown } | undefined {
  const params = isJsonObject(message.params) ? message.params : undefined;
  if (message.method === 'tools/call') {
    return { ...(typeof params?.name === 'string' && { operation: params.name }), args: params?.arguments };
  }
  if (message.method === 'message/send' || message.method === 'message/stream') {
    const parts = isJsonObject(params?.message) && Array.isArray(params.message.parts) ? params.message.parts : [];
    for (const part of parts) {
      const data = isJsonObject(part) && isJsonObject(part.data) ? part.data : undefined;
      if (data && typeof data.skill === 'string') return { operation: data.skill, args: data.input ?? data.parameters };
    }
    return { args: undefined };
  }
  return undefined;
}

const WEBHOOK_CONFIGS = ['push_notification_config', 'reporting_webhook'];

/** Whether `value` (a request's arguments, or a whole request body) registers webhook credentials anywhere. */
export function carriesWebhookCredentials(value: unknown): boolean {
  return carriesWebhookAuthentication(value, MAX_DEPTH);
}

/** A non-empty `authentication` object on a webhook configuration anywhere in the arguments. */
function carriesWebhookAuthentication(value: unknown, depth: number): boolean {
  if (depth <= 0 || value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some((item) => carriesWebhookAuthentication(item, depth - 1));
  const obj = value as Record<string, unknown>;
  for (const [key, child] of Object.entries(obj)) {
    const isConfig = WEBHOOK_CONFIGS.includes(key) || (key === 'notification_configs' && Array.isArray(child));
    if (isConfig) {
      const configs = Array.isArray(child) ? child : [child];
      if (configs.some((c) => isJsonObject(c) && isJsonObject(c.authentication) && Object.keys(c.authentication).length > 0)) return true;
    }
    if (carriesWebhookAuthentication(child, depth - 1)) return true;
  }
  return false;
}
