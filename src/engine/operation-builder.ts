/**
 * Building a new operation's row: the exact request we will send (our
 * idempotency_key, `context` carrying the operation id, the per-operation webhook)
 * and its first timer. Kept apart from the operation service so that a row can be
 * built and then inserted inside another write (a corrected child operation and
 * its superseded parent in one commit).
 */
import { v7 as uuidv7 } from 'uuid';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { acceptsPushNotifications, requiresIdempotencyKey } from '../adcp/task-kinds.js';
import type { InputRequest } from '../domain/input-request.js';
import { firstStepKind, type GovernedState } from '../domain/governed-flow.js';
import { deadlineFor } from '../domain/timing.js';
import type { AgentRow, OperationRow } from '../store/index.js';
import type { NewEvent } from '../store/operations-repo.js';
import { newOperationRow } from '../store/operation-row.js';
import type { SecretBox } from '../store/secret-box.js';
import type { KeyReservation } from '../store/idempotency-repo.js';
import { withVersionPin } from '../adcp/dialect.js';
import { dialectOf } from './agent-endpoints.js';
import { EngineError } from './errors.js';
import { checkNewRequest } from './request-validity.js';
import { heldTimer, reminderPolicyOf } from './input-timers.js';
import { RequestSealer } from './sealed-request.js';
import type { ReportingAsked, ReportingPlan } from './media-buys/reporting-choice.js';

export type WebhookMode = 'rfc9421' | 'hmac' | 'bearer' | 'none';

export interface CreateOperationInput {
  tenantId: string;
  agentId: string;
  task: string;
  params: Record<string, unknown>;
  webhook?: WebhookMode;
  parentId?: string;
  /**
   * The client's Idempotency-Key, if any. The AdCP idempotency_key is derived from it,
   * so a client retrying after losing our answer (even across our crash) reaches the
   * same operation and the seller sees the same key: never a second buy.
   */
  clientKey?: string;
  /** Who asked for it (an API key's name), recorded on the `created` event. */
  actor?: string;
  /**
   * Held for a person before anything is sent (spend approval): stored `requested`
   * with no timer, `needs_input` set and this request shown.
   */
  hold?: InputRequest;
  /**
   * Governed (AdCP spec, governance): the flow's first state. The operation starts at its
   * check_governance step instead of the send, and is sent only once approved.
   */
  governance?: GovernedState;
  /** The API's Idempotency-Key, reserved in the same commit as the operation (src/api/idempotency.ts). */
  reservation?: KeyReservation;
  /**
   * A create_media_buy's reporting webhook (src/engine/media-buys/reporting-choice.ts): ours at
   * this frequency and authentication, or null for none of ours. Left undefined, it is chosen
   * when the operation is stored, from `reportingAsked` and the tenant's defaults.
   */
  reporting?: ReportingPlan | null;
  /** What the caller asked of the reporting webhook (`POST /v1/media-buys` `reporting`). */
  reportingAsked?: ReportingAsked;
}

export interface BuildOptions {
  publicUrl?: string;
  deadlinesMs: Record<string, number>;
  instanceId: string;
  leaseMs: number;
  /** ADCP_ORCH_INPUT_REMINDER_MS: a held operation's only timer is its request's clock. */
  inputReminderMs?: number;
  /**
   * Set when the creator sends a claimed row at once (the call's timeout): the row is
   * stored already marked `calling_adcp`, with the resend timer a mark would set, so the
   * send waits for one commit, not two. A crash after this insert leaves an ambiguous
   * send that is resent with the same key and bytes, exactly as after a separate mark.
   */
  sendingNowTimeoutMs?: number;
}

export interface BuiltOperation {
  row: OperationRow;
  /** The request as it will be sent. */
  params: Record<string, unknown>;
  /** The events that record its creation. */
  events: NewEvent[];
}

const IDEMPOTENCY_KEY_RE = /^[A-Za-z0-9_.:-]{16,255}$/;

/**
 * The row of a new operation for `agent`. With `claim` it is created already
 * leased by this instance (its creator sends it at once, and no other worker or
 * instance can claim it in between; if we die the lease expires and it is resent).
 */
export function buildOperation(
  input: CreateOperationInput,
  agent: AgentRow,
  secrets: SecretBox,
  options: BuildOptions,
  now: number,
  claim: boolean,
): BuiltOperation {
  // Time-ordered (UUIDv7): a new row lands at the end of the primary-key index instead of
  // on a random page, so its commit writes fewer pages (the id stays opaque).
  const id = uuidv7();
  const params: Record<string, unknown> = { ...input.params };
  let idempotencyKey = typeof params.idempotency_key === 'string' ? params.idempotency_key : undefined;
  if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY_RE.test(idempotencyKey)) {
    throw new EngineError('invalid_request', 'params.idempotency_key must match ^[A-Za-z0-9_.:-]{16,255}$', 400);
  }
  idempotencyKey ??= input.clientKey ? derivedIdempotencyKey(input.tenantId, agent.id, input.task, input.clientKey) : randomUUID();
  if (requiresIdempotencyKey(input.task)) params.idempotency_key = idempotencyKey;
  // `context` is ours and echoed verbatim by the seller: it carries our operation id.
  params.context = { ...(isObject(params.context) ? params.context : {}), orchestrator_operation_id: id };

  const webhook = webhookFor(input.task, input.webhook, id, options.publicUrl, secrets);
  if (webhook.config) params.push_notification_config = webhook.config;
  const reporting = input.task === 'create_media_buy' && input.reporting && options.publicUrl && params.reporting_webhook === undefined ? reportingWebhookFor(input.reporting, options.publicUrl) : undefined;
  if (reporting) params.reporting_webhook = reporting.config;
  // The version pin of the agent's dialect, stored with the request: every resend, and the governance
  // check's payload, are the very bytes the seller gets (src/adcp/dialect.ts).
  const dialect = dialectOf(agent);
  Object.assign(params, withVersionPin(params, dialect));
  // What the caller wrote must be valid for the agent before anything is stored (request-validity.ts).
  const checked = checkNewRequest(
    input.task,
    params,
    { idempotencyKey: input.params.idempotency_key === undefined, reportingWebhook: reporting !== undefined, planId: input.governance !== undefined },
    dialect.version,
  );

  const held = input.hold !== undefined;
  const governed = input.governance !== undefined;
  const leased = claim && !held;
  // Due at once: the first thing to do is send it. A held buy is sent only by a person's
  // approval; its timer is its request's clock (reminders, expiry), which never sends.
  // A governed one starts at its check: it is sent only once approved.
  // One that fails its schema (our part of it) is stored unsent, for its send to fail it visibly.
  const sendingNow = leased && !governed && checked.valid && options.sendingNowTimeoutMs !== undefined;
  const timer = held
    ? heldTimer(input.hold!, reminderPolicyOf(options))
    : sendingNow
      ? { status: 'calling_adcp', next_check_at: now + options.sendingNowTimeoutMs! + 5_000, check_kind: 'send' }
      : { next_check_at: now, check_kind: governed ? firstStepKind(input.governance!) : 'send' };
  const row = newOperationRow(
    { id, tenant_id: input.tenantId, agent_id: agent.id, type: input.task, idempotency_key: idempotencyKey, request_body: new RequestSealer(secrets).seal(params), created_at: now },
    {
      deadline_at: deadlineFor(input.task, now, options.deadlinesMs),
      status_since: now,
      ...timer,
      attempt: leased ? 1 : 0,
      lease_owner: leased ? options.instanceId : null,
      lease_until: leased ? now + options.leaseMs : null,
      lease_epoch: leased ? 1 : 0,
      webhook_mode: webhook.mode,
      webhook_token: webhook.token,
      webhook_secret_enc: webhook.secretSealed,
      parent_id: input.parentId ?? null,
      ...(reporting ? { reporting_token: reporting.token } : {}),
      ...(governed ? { governance: JSON.stringify(input.governance) } : {}),
      ...(held ? { needs_input: 1, input_message: input.hold!.message, input_request: JSON.stringify(input.hold) } : {}),
    },
  );
  const events: NewEvent[] = [
    { source: 'user', kind: 'created', to: 'requested', at: now, actor: input.actor, ...(input.parentId ? { detail: { parent_id: input.parentId } } : {}) },
  ];
  if (held) events.push({ source: 'user', kind: 'input_requested', from: 'requested', to: 'requested', at: now, detail: { input_request: input.hold } });
  if (sendingNow) events.push({ source: 'call', kind: 'transition', from: 'requested', to: 'calling_adcp', at: now });
  return { row, params, events };
}

/** A stable AdCP idempotency_key for a client's Idempotency-Key (UUID-shaped, within the spec's pattern). */
function derivedIdempotencyKey(tenantId: string, agentId: string, task: string, clientKey: string): string {
  const h = createHash('sha256').update(`${tenantId}\0${agentId}\0${task}\0${clientKey}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The request minus the parts that differ per attempt (our context, webhook URLs and secrets; the reporting webhook when it is ours). */
export function requestFingerprint(params: Record<string, unknown>, ourReporting = false): string {
  const { context: _c, push_notification_config: _p, idempotency_key: _k, ...all } = params;
  const { reporting_webhook: _r, ...withoutReporting } = all;
  return JSON.stringify(ourReporting ? withoutReporting : all);
}

function webhookFor(task: string, requested: WebhookMode | undefined, operationId: string, publicUrl: string | undefined, secrets: SecretBox) {
  const none = { mode: 'none' as WebhookMode, token: null, secretSealed: null, config: undefined as Record<string, unknown> | undefined };
  const mode = requested ?? (publicUrl ? 'rfc9421' : 'none');
  if (mode === 'none') return none;
  if (!publicUrl) throw new EngineError('webhook_unavailable', 'webhooks need ADCP_ORCH_PUBLIC_URL to be set', 400);
  if (!acceptsPushNotifications(task)) return none;
  // Stored as is, not hashed: it names the operation and authenticates nothing (each mode checks
  // its own key or sealed secret; `none` gets 404), and it is in the stored request's URL anyway.
  const token = randomBytes(24).toString('base64url');
  const config: Record<string, unknown> = { url: `${publicUrl}/webhooks/adcp/${token}`, operation_id: operationId };
  let secretSealed: string | null = null;
  if (mode === 'hmac' || mode === 'bearer') {
    // A fresh 32-byte secret per operation (43 base64url characters, above the spec's 32).
    const secret = randomBytes(32).toString('base64url');
    secretSealed = secrets.seal(secret);
    config.authentication = { schemes: [mode === 'hmac' ? 'HMAC-SHA256' : 'Bearer'], credentials: secret };
  }
  return { mode, token, secretSealed, config };
}

/**
 * Our reporting webhook for a new buy (README, Media buys): a URL with a token of its own and, unless
 * it is signed with RFC 9421, a fresh 32-byte secret (43 base64url characters, above the spec's
 * 32), which the stored request keeps sealed in place like every credential.
 */
function reportingWebhookFor(plan: ReportingPlan, publicUrl: string): { token: string; config: Record<string, unknown> } {
  const token = randomBytes(24).toString('base64url');
  const config: Record<string, unknown> = { url: `${publicUrl}/webhooks/adcp/reporting/${token}`, reporting_frequency: plan.frequency };
  if (plan.auth !== 'rfc9421') {
    config.authentication = { schemes: [plan.auth === 'hmac' ? 'HMAC-SHA256' : 'Bearer'], credentials: randomBytes(32).toString('base64url') };
  }
  return { token, config };
}

/**
 * The request (opened) a new operation sends again after an earlier one: without our per-operation
 * parts, which it gets afresh (our reporting webhook too, when `ourReporting` says the earlier one's was ours).
 */
export function requestWithoutOurParts(request: Record<string, unknown>, ourReporting = false): Record<string, unknown> {
  // The version pin too: the new request gets the one of the agent's dialect now.
  const { idempotency_key: _k, push_notification_config: _p, context, adcp_major_version: _m, adcp_version: _v, ...all } = request;
  const { reporting_webhook: _r, ...withoutReporting } = all;
  const rest = ourReporting ? withoutReporting : all;
  if (isObject(context)) {
    const { orchestrator_operation_id: _id, ...theirs } = context;
    if (Object.keys(theirs).length > 0) return { ...rest, context: theirs };
  }
  return rest;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
