/**
 * Meeting a governance agent's `conditions` (AdCP spec, governance): each names a
 * field of the seller arguments and, usually, the value it must take. Fields
 * are payload-relative in 3.0 (`end_time`, `packages[0].end_time`) and rooted
 * at the request in 3.2 (`payload.end_time`): a leading `payload.` is
 * stripped. Pure: the engine re-keys and stores the result.
 */
import type { GovernanceCondition } from './governance-decision.js';
import { mergeParams } from './input-request.js';

export type PathStep = string | number;

/** `payload.packages[0].end_time` → ['packages', 0, 'end_time']; undefined when it cannot be read. */
export function conditionPath(field: string): PathStep[] | undefined {
  const text = field.startsWith('payload.') ? field.slice('payload.'.length) : field;
  const steps: PathStep[] = [];
  const re = /([^.[\]]+)|\[(\d+)\]/g;
  let consumed = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    // Only dots may sit between steps: anything else is a field we do not understand.
    const between = text.slice(consumed, m.index);
    if (between !== '' && between !== '.') return undefined;
    steps.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
    consumed = m.index + m[0].length;
  }
  if (consumed !== text.length || steps.length === 0 || typeof steps[0] !== 'string') return undefined;
  return steps;
}

/** Fields the orchestrator owns: a condition (or a person) may not move them. */
const OURS = new Set(['idempotency_key', 'context', 'push_notification_config', 'governance_context', 'plan_id']);

export type Applied = { payload: Record<string, unknown> } | { problem: string };

/**
 * The payload with every condition's `required_value` in place, then the
 * person's `params` laid over it (one level deep, as corrections are). A
 * condition without a `required_value` must be met by the person's params
 * (its top-level field given), or it cannot be applied.
 */
export function applyConditions(
  payload: Record<string, unknown>,
  conditions: GovernanceCondition[],
  params?: Record<string, unknown>,
): Applied {
  const next = structuredClone(payload);
  for (const c of conditions) {
    const path = conditionPath(c.field);
    if (!path) return { problem: `condition field "${c.field}" is not a path into the request` };
    if (OURS.has(String(path[0]))) return { problem: `condition field "${c.field}" names a field the orchestrator sets` };
    if (!('required_value' in c)) {
      if (params && String(path[0]) in params) continue;
      return { problem: `condition on "${c.field}" states no required value: give it in params (${String(path[0])})` };
    }
    const problem = setAt(next, path, c.required_value);
    if (problem) return { problem: `condition field "${c.field}": ${problem}` };
  }
  if (params) {
    const reserved = Object.keys(params).filter((k) => OURS.has(k));
    if (reserved.length > 0) return { problem: `params may not set ${reserved.join(', ')}: the orchestrator sets them` };
    return { payload: mergeParams(next, params) };
  }
  return { payload: next };
}

/** Whether every condition can be met without a person: each states its required value. */
export function canApplyUnattended(conditions: GovernanceCondition[]): boolean {
  return conditions.every((c) => 'required_value' in c && conditionPath(c.field) !== undefined);
}

function setAt(root: Record<string, unknown>, path: PathStep[], value: unknown): string | undefined {
  let node: unknown = root;
  for (let i = 0; i < path.length - 1; i++) {
    const step = path[i]!;
    const child = (node as Record<string | number, unknown>)[step];
    if (child === null || typeof child !== 'object') {
      // An array index must exist; a missing object on the way is created.
      if (typeof path[i + 1] === 'number' || typeof step === 'number') return `no ${String(step)} to set it in`;
      (node as Record<string, unknown>)[step] = {};
    }
    node = (node as Record<string | number, unknown>)[step];
  }
  const last = path[path.length - 1]!;
  if (typeof last === 'number' && (!Array.isArray(node) || last >= node.length)) return `index ${last} is outside the list`;
  (node as Record<string | number, unknown>)[last] = structuredClone(value);
  return undefined;
}
