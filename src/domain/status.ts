/**
 * Operation statuses (docs/ARCHITECTURE.md, The life of an operation) and the one table of allowed transitions.
 *
 * Local statuses come before anything reaches the seller; the rest are the AdCP
 * task statuses spelled exactly as on the wire (`enums/task-status.json`).
 */
export const LOCAL_STATUSES = ['requested', 'calling_adcp'] as const;
export const ADCP_TASK_STATUSES = [
  'submitted',
  'working',
  'input-required',
  'auth-required',
  'completed',
  'failed',
  'canceled',
  'rejected',
  'unknown',
] as const;
export const OPERATION_STATUSES = [...LOCAL_STATUSES, ...ADCP_TASK_STATUSES] as const;

export type LocalStatus = (typeof LOCAL_STATUSES)[number];
export type AdcpTaskStatus = (typeof ADCP_TASK_STATUSES)[number];
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

export const TERMINAL_STATUSES: ReadonlySet<OperationStatus> = new Set(['completed', 'failed', 'canceled', 'rejected']);
/** Statuses that mean the seller is waiting on the buyer: a person must answer. */
export const NEEDS_INPUT_STATUSES: ReadonlySet<OperationStatus> = new Set(['input-required', 'auth-required']);

export function isTerminal(status: OperationStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}

export function isAdcpTaskStatus(value: unknown): value is AdcpTaskStatus {
  return typeof value === 'string' && (ADCP_TASK_STATUSES as readonly string[]).includes(value);
}

export function isOperationStatus(value: unknown): value is OperationStatus {
  return typeof value === 'string' && (OPERATION_STATUSES as readonly string[]).includes(value);
}

const NON_TERMINAL_ADCP: OperationStatus[] = ['submitted', 'working', 'input-required', 'auth-required', 'unknown'];
const TERMINAL: OperationStatus[] = ['completed', 'failed', 'canceled', 'rejected'];

/**
 * Allowed transitions, the whole state machine in one place.
 *
 * The spec has no normative table; its practical model is "non-terminal → anything,
 * terminal is absorbing" (AdCP spec, task status). Locally we add the two pre-send steps:
 * `requested` can only be sent (or canceled before sending, rejected by a person who
 * declines a buy held for approval, or fail locally when the request could not even be
 * built); `calling_adcp` can go back to `requested` when a
 * send is known not to have left (retry), or anywhere an AdCP reply can lead.
 * A reply or webhook may say the same non-terminal status again (`submitted` →
 * `submitted` with fresh progress): that is an observation, not a transition.
 */
export const TRANSITIONS: Readonly<Record<OperationStatus, readonly OperationStatus[]>> = {
  requested: ['calling_adcp', 'canceled', 'rejected', 'failed'],
  calling_adcp: ['requested', ...NON_TERMINAL_ADCP, ...TERMINAL],
  submitted: ['working', 'input-required', 'auth-required', 'unknown', ...TERMINAL],
  working: ['submitted', 'input-required', 'auth-required', 'unknown', ...TERMINAL],
  'input-required': ['submitted', 'working', 'auth-required', 'unknown', ...TERMINAL],
  'auth-required': ['submitted', 'working', 'input-required', 'unknown', ...TERMINAL],
  unknown: ['submitted', 'working', 'input-required', 'auth-required', ...TERMINAL],
  completed: [],
  failed: [],
  canceled: [],
  rejected: [],
};

export function canTransition(from: OperationStatus, to: OperationStatus): boolean {
  return TRANSITIONS[from].includes(to);
}
