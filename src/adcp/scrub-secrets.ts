/**
 * Nothing an agent sends back may carry a secret we sent it. A seller's error
 * text can echo our request ("invalid push_notification_config: {...}") or our
 * Authorization header, and whatever a reply or a failure says ends up in the
 * database (events, `error`, stalled reasons), in API answers and in logs. So
 * every reply and every failure of a call is cleaned of the agent's token, the
 * credentials inside the request and the webhook URLs we registered (their path
 * tokens are unguessable and only the seller needs them), before anyone sees it.
 */
import { credentialValues, MIN_SCRUBBED_LENGTH, REDACTED } from '../domain/credential-fields.js';
import { isJsonObject } from './json.js';
import { AdcpTransportError, type AdcpClient, type AgentEndpoint, type TaskReply } from './types.js';

/** The secrets a call to `agent` with `params` puts on the wire. */
export function secretsOfCall(agent: AgentEndpoint, params?: Record<string, unknown>): string[] {
  const secrets = params ? credentialValues(params) : [];
  // The webhook URLs we registered (the operation's, and a buy's reporting webhook): their path tokens only the seller needs.
  for (const field of ['push_notification_config', 'reporting_webhook']) {
    const hook = params && isJsonObject(params[field]) ? params[field].url : undefined;
    if (typeof hook === 'string' && hook.length >= MIN_SCRUBBED_LENGTH) secrets.push(hook);
  }
  if (agent.authToken && agent.authToken.length >= MIN_SCRUBBED_LENGTH) secrets.push(agent.authToken);
  return secrets;
}

function scrubText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

/**
 * `value` with every occurrence of a secret replaced, at any depth (keys too).
 * Works on the JSON text, where a string containing a secret always contains the
 * secret's own escaped form; the result is parsed back, which keeps a seller's
 * `"__proto__"` key an own data property. Returned untouched when nothing matches,
 * so the common case costs one JSON.stringify.
 */
export function scrubSecrets<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0 || value === undefined) return value;
  const text = JSON.stringify(value);
  if (text === undefined) return value;
  const scrubbed = scrubText(text, escapedSecrets(secrets));
  return scrubbed === text ? value : (JSON.parse(scrubbed) as T);
}

/** Each secret as it is spelled inside a JSON string. */
function escapedSecrets(secrets: readonly string[]): string[] {
  return secrets.map((s) => JSON.stringify(s).slice(1, -1));
}

/**
 * A reply scrubbed; one that carries its data's JSON text (a large reply: see client.ts)
 * is scrubbed on that text, with no second serialisation, and its data parsed again
 * only when a secret was found in it.
 */
export function scrubReply(reply: TaskReply, secrets: readonly string[]): TaskReply {
  if (reply.dataJson === undefined) return scrubSecrets(reply, secrets);
  const { data, dataJson, ...rest } = reply;
  const text = scrubText(dataJson, escapedSecrets(secrets));
  const clean = scrubSecrets(rest, secrets);
  return text === dataJson ? { ...clean, data, dataJson } : { ...clean, data: JSON.parse(text) as Record<string, unknown>, dataJson: text };
}

/** A failure of a call, rebuilt without the secrets in its message (and so in its stack) or its AdCP error. */
export function scrubError(err: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return err;
  if (err instanceof AdcpTransportError) {
    const message = scrubText(err.message, secrets);
    const adcpError = scrubSecrets(err.adcpError, secrets);
    if (message === err.message && adcpError === err.adcpError) return err;
    return new AdcpTransportError(message, err.kind, err.httpStatus, adcpError, err.rpcCode);
  }
  if (err instanceof Error) {
    const text = `${err.message}\n${err.stack ?? ''}`;
    if (scrubText(text, secrets) === text) return err;
    const clean = new Error(scrubText(err.message, secrets));
    clean.name = err.name;
    return clean;
  }
  return typeof err === 'string' ? scrubText(err, secrets) : err;
}

/** `inner` with every reply and failure scrubbed of the secrets of its call. */
export function scrubbingClient(inner: AdcpClient): AdcpClient {
  async function guarded<T>(secrets: string[], call: () => Promise<T>, scrub: (value: T, secrets: readonly string[]) => T = scrubSecrets): Promise<T> {
    if (secrets.length === 0) return call();
    let result: T;
    try {
      result = await call();
    } catch (err) {
      throw scrubError(err, secrets);
    }
    return scrub(result, secrets);
  }
  return {
    callTask: (agent, task, params, opts) => guarded(secretsOfCall(agent, params), () => inner.callTask(agent, task, params, opts), scrubReply),
    continueTask: (agent, continuation, task, params, opts) =>
      guarded(secretsOfCall(agent, params), () => inner.continueTask(agent, continuation, task, params, opts), scrubReply),
    getTask: (agent, taskId, opts) => guarded(secretsOfCall(agent), () => inner.getTask(agent, taskId, opts), scrubReply),
    listTasks: (agent, query, opts) => guarded(secretsOfCall(agent), () => inner.listTasks(agent, query, opts)),
    close: () => inner.close(),
  };
}
