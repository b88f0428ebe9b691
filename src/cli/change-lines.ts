/**
 * One line per change of an operation, for `ops watch` and `ops show`: when, which
 * operation, what kind of change (the notification type it raises, or the event's
 * kind for bookkeeping such as a resend), the status change, where it came from,
 * who did it when a person did, and a short detail (a decision, an error code, a
 * reason, the seller's or a person's message).
 */
import { notificationTypeFor } from '../domain/notification-types.js';
import type { Notification, StreamEvent } from './event-stream.js';

/** Extras a notification carries beside its event (docs/ARCHITECTURE.md, Telling users). */
interface Extras {
  message?: unknown;
  media_buy_id?: unknown;
  reminder?: unknown;
  /** The operation's error, for a failed or rejected one. */
  error?: unknown;
}

const MAX_MESSAGE = 100;

export function eventLine(operationId: string, event: StreamEvent, type?: string, extras: Extras = {}): string {
  const label = type ?? notificationTypeFor({ kind: event.kind, to_status: event.to }) ?? event.kind;
  const by = event.actor ? ` by ${event.actor}` : '';
  const detail = shortDetail(event, extras);
  return `${event.at}  ${operationId}  ${label.padEnd(24)} ${change(event).padEnd(30)} ${event.source}${by}${detail ? `  ${detail}` : ''}\n`;
}

export function notificationLine(n: Notification): string {
  const { operation, event, ...extras } = n.data;
  if (!operation && event && n.data.media_buy) return buyLine(n, event);
  if (!operation || !event) return campaignLine(n);
  const failed = n.type === 'operation.failed' || n.type === 'operation.rejected';
  return eventLine(operation.id, event, n.type, { ...extras, ...(failed ? { error: operation.error } : {}) });
}

/** A live buy's notification (`media_buy.*`): which buy, what changed, its delivery and pacing now. */
function buyLine(n: Notification, event: StreamEvent): string {
  const b = asObject(n.data.media_buy);
  const delivery = asObject(b.delivery);
  const pacing = asObject(delivery.pacing);
  const spent = typeof delivery.spend === 'number' ? `spend=${delivery.spend}` : '';
  const state = typeof pacing.state === 'string' && pacing.state !== 'not_started' ? `pacing=${pacing.state}` : '';
  const reason = typeof asObject(event.detail).reason === 'string' ? String(asObject(event.detail).reason) : '';
  const detail = [`media_buy_id=${String(b.media_buy_id ?? '?')}`, spent, state, reason].filter(Boolean).join('  ');
  return `${event.at}  ${String(b.id ?? '?')}  ${n.type.padEnd(24)} ${change(event).padEnd(30)} ${event.source}  ${detail}
`;
}

/** A campaign's notification (`campaign.completed`): which campaign, how its buys ended, what was committed. */
function campaignLine(n: Notification): string {
  const c = asObject(n.data.campaign);
  const summary = asObject(c.summary);
  const budget = asObject(c.budget);
  const counts = ['done', 'denied', 'failed', 'canceled'].filter((k) => typeof summary[k] === 'number' && summary[k] !== 0).map((k) => `${k}=${String(summary[k])}`);
  const committed = typeof budget.committed === 'number' ? `  committed=${budget.committed}` : '';
  return `${n.created_at}  ${String(c.id ?? '?')}  ${n.type.padEnd(24)} ${String(c.status ?? '').padEnd(30)} campaign  ${counts.join(' ')}${committed}\n`;
}

function change(e: StreamEvent): string {
  if (e.from && e.to && e.from !== e.to) return `${e.from} -> ${e.to}`;
  if (!e.from && e.to) return `-> ${e.to}`;
  return e.to ?? e.from ?? '';
}

function shortDetail(e: StreamEvent, extras: Extras): string {
  const d = asObject(e.detail);
  const parts: string[] = [];
  if (typeof d.decision === 'string') parts.push(d.decision);
  if (extras.reminder === true) parts.push('reminder');
  const code = errorCode(d.error) ?? errorCode(extras.error);
  if (code) parts.push(code);
  if (typeof d.reason === 'string') parts.push(d.reason);
  const message = humanText(d.message) ?? humanText(extras.message);
  if (message) parts.push(JSON.stringify(message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message));
  if (typeof extras.media_buy_id === 'string') parts.push(`media_buy_id=${extras.media_buy_id}`);
  if (typeof d.operation_id === 'string') parts.push(`operation ${d.operation_id}`);
  return parts.join('  ');
}

/** A message meant for a person; a seller's reply text that is the result as JSON is left to `ops show`. */
function humanText(v: unknown): string | undefined {
  if (typeof v !== 'string' || v.trim() === '') return undefined;
  return /^\s*[[{]/.test(v) ? undefined : v;
}

/** An AdCP error is `{code, message}`; a seller may send a list of them. */
function errorCode(error: unknown): string | undefined {
  const first = Array.isArray(error) ? error[0] : error;
  const code = asObject(first).code;
  return typeof code === 'string' ? code : undefined;
}

function asObject(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
