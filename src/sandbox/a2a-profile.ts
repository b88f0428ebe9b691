/**
 * The AdCP A2A profile v3 as a seller that requires it (a2a-profile-extension.mdx):
 * the card declares it `required: true`, and every JSON-RPC request to the interface
 * must activate it. One that does not is refused with A2A's own error for a required
 * extension (the page: "An agent that declares the profile `required: true` MUST reject
 * a request that does not activate it"; profile-routing errors "use native A2A error
 * handling"): ExtensionSupportRequiredError, -32008 in A2A 1.0's JSON-RPC binding. An
 * activated `message/send` must also be a profile invocation (one `{skill, input}`
 * DataPart, text beside it only, a messageId), or it is refused as invalid params
 * rather than guessed at. An activated response echoes the URI, as the page advises.
 *
 * Activation is read from A2A 1.0's `A2A-Extensions` and A2A 0.3's `X-A2A-Extensions`
 * (this sandbox speaks 0.3 JSON-RPC), each a comma-separated list of URIs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isPlainObject } from './wire.js';

export const ADCP_A2A_PROFILE = 'https://adcontextprotocol.org/extensions/adcp/v3';

/** A2A's ExtensionSupportRequiredError (A2A 1.0, JSON-RPC binding). */
export const EXTENSION_SUPPORT_REQUIRED = -32008;
const INVALID_PARAMS = -32602;

/** The card's declaration of the profile when the seller requires it (params omitted, as the page says). */
export const REQUIRED_PROFILE = { uri: ADCP_A2A_PROFILE, description: 'AdCP structured task invocation profile', required: true };

export interface ProfileRefusal {
  code: number;
  message: string;
  /** What is wrong, in the words of the profile's test vectors (`extension_not_activated`, ...). */
  reason: string;
}

/** The extension URIs a request activates. */
export function activatedExtensions(headers: IncomingMessage['headers']): Set<string> {
  const uris = new Set<string>();
  for (const name of ['a2a-extensions', 'x-a2a-extensions']) {
    const value = headers[name];
    for (const line of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      for (const uri of line.split(',')) if (uri.trim() !== '') uris.add(uri.trim());
    }
  }
  return uris;
}

const refusal = (reason: string, message: string): ProfileRefusal => ({ code: INVALID_PARAMS, message, reason });

/** Why a message is no profile invocation, or undefined when it is one. Parts in A2A 0.3 (`kind`) or 1.0 (member) form. */
export function invocationRefusal(message: unknown): ProfileRefusal | undefined {
  if (!isPlainObject(message) || typeof message.messageId !== 'string' || message.messageId === '') {
    return refusal('invalid_a2a_message', 'an A2A message needs a messageId');
  }
  const parts = message.parts;
  if (!Array.isArray(parts) || parts.length === 0) return refusal('invalid_a2a_message', 'an A2A message needs parts');
  const kinds = parts.map(partKind);
  const data = parts.filter((_, i) => kinds[i] === 'data');
  if (data.length > 1) return refusal('multiple_invocation_dataparts', 'a profile invocation carries exactly one DataPart; this one carries several');
  if (kinds.some((k) => k !== 'data' && k !== 'text')) return refusal('unsupported_part_type', 'only TextParts may accompany the invocation DataPart');
  const invocation = data.length === 1 && isPlainObject(data[0]) ? data[0].data : undefined;
  const keys = isPlainObject(invocation) ? Object.keys(invocation).sort().join(',') : '';
  if (!isPlainObject(invocation) || keys !== 'input,skill' || typeof invocation.skill !== 'string' || invocation.skill === '' || !isPlainObject(invocation.input)) {
    return refusal('invalid_invocation_shape', 'the invocation DataPart must be exactly {skill, input} (parameters is no alias for input)');
  }
  return undefined;
}

function partKind(part: unknown): string {
  if (!isPlainObject(part)) return 'invalid';
  if (typeof part.kind === 'string') return part.kind;
  if ('data' in part) return 'data';
  if ('text' in part) return 'text';
  return 'file';
}

/** Why a JSON-RPC request to a seller that requires the profile is refused, or undefined when it may go on. */
export function profileRefusal(headers: IncomingMessage['headers'], body: unknown): ProfileRefusal | undefined {
  if (!activatedExtensions(headers).has(ADCP_A2A_PROFILE)) {
    return { code: EXTENSION_SUPPORT_REQUIRED, message: `Extension support is required: ${ADCP_A2A_PROFILE}`, reason: 'extension_not_activated' };
  }
  const rpc = isPlainObject(body) ? body : undefined;
  if (rpc?.method === 'message/send' || rpc?.method === 'message/stream') {
    return invocationRefusal(isPlainObject(rpc.params) ? rpc.params.message : undefined);
  }
  return undefined;
}

type Next = (err?: unknown) => void;

/**
 * Express middleware for the JSON-RPC endpoint, after a JSON body parser: refuses what
 * `profileRefusal` refuses (HTTP 200, a JSON-RPC error with the request's id), and
 * echoes the activation on everything it lets through.
 */
export function requireProfile(req: IncomingMessage & { body?: unknown }, res: ServerResponse, next: Next): void {
  if (req.method !== 'POST') return next();
  const refused = profileRefusal(req.headers, req.body);
  if (!refused) {
    res.setHeader('A2A-Extensions', ADCP_A2A_PROFILE);
    return next();
  }
  const id = isPlainObject(req.body) && (typeof req.body.id === 'string' || typeof req.body.id === 'number') ? req.body.id : null;
  const error = { code: refused.code, message: refused.message, data: { reason: refused.reason, ...(refused.code === EXTENSION_SUPPORT_REQUIRED && { required_extensions: [ADCP_A2A_PROFILE] }) } };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, error }));
}

/** A body the JSON parser in front of `requireProfile` could not read: JSON-RPC's parse error, as the A2A library answers it. */
export function parseErrorAsJsonRpc(err: unknown, _req: IncomingMessage, res: ServerResponse, next: Next): void {
  if (!(err instanceof SyntaxError)) return next(err);
  res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Invalid JSON payload.' } }));
}
