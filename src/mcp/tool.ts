/**
 * What a tool is, in one small file per tool (src/mcp/tools/): its name, the least role
 * that sees and may call it, zod input and output schemas, and one of three kinds of work:
 *
 * - `read`: answers JSON from the store (get_operation, list_agents …);
 * - `change`: changes something through an engine service and answers its JSON
 *   (answer_operation, cancel_operation, refresh_media_buy …); it takes `idempotency_key`;
 * - `start`: starts one durable operation (run_task, create_media_buy, sync_plan,
 *   pause_media_buy, resume_media_buy); it takes `idempotency_key` and may run as an
 *   MCP task whose id is the operation's.
 *
 * The tool files only say what to call; src/mcp/call-tool.ts does the rest the same
 * way for all of them (role, schema, idempotency, task or short wait, the result's
 * text, errors, metrics).
 */
import { z } from 'zod';
import type { Role } from '../domain/roles.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../engine/request-idempotency.js';
import type { KeyReservation } from '../store/idempotency-repo.js';
import type { OperationRow } from '../store/index.js';
import type { ToolContext } from './context.js';

// Loose shapes: the tool's JSON is the API's, and a client must not reject a field added later.
type InputShape = z.ZodObject;

interface ToolBase<I extends InputShape> {
  name: string;
  title: string;
  /** What a model reads to choose the tool: what it does, what it costs, who must act. */
  description: string;
  /** The least role that sees this tool in tools/list and may call it. */
  role: Role;
  input: I;
  output: z.ZodType;
}

export interface ReadTool<I extends InputShape = InputShape> extends ToolBase<I> {
  kind: 'read';
  run(ctx: ToolContext, args: z.output<I>): Promise<unknown>;
  /** The paragraph beside the JSON (`args`: what the call asked, e.g. the id an answer does not repeat). */
  summary(json: unknown, ctx: ToolContext, args: z.output<I>): string;
}

export interface ChangeTool<I extends InputShape = InputShape> extends ToolBase<I> {
  kind: 'change';
  /** Records the caller (ctx.auth.keyName) as the actor, as the API does. */
  run(ctx: ToolContext, args: z.output<I>, clientKey: string | undefined): Promise<unknown>;
  summary(json: unknown, ctx: ToolContext, args: z.output<I>): string;
  /** Hints for clients: it cannot be undone (cancel), or repeating it changes nothing more. */
  destructive?: boolean;
}

/** How a start tool's operation is started: under the caller's key, and with how long a wait for its first reply. */
export interface OperationStartOptions {
  /** The caller's idempotency_key (the AdCP key is derived from it). */
  clientKey?: string;
  /** That key, reserved in the commit that stores the operation. */
  reservation?: KeyReservation;
  /** How long to wait for the first reply (0 for a task: the task is answered at once). */
  waitMs: number;
}

export interface StartTool<I extends InputShape = InputShape> extends ToolBase<I> {
  kind: 'start';
  /** Starts the operation (the summary is the operation's, src/mcp/operation-summary.ts). */
  start(ctx: ToolContext, args: z.output<I>, options: OperationStartOptions): Promise<OperationRow>;
  /** A sentence after the operation's summary, about what the operation works on (e.g. the media buy it pauses). */
  note?(ctx: ToolContext, args: z.output<I>): string;
}

export type Tool = ReadTool | ChangeTool | StartTool;

export const IdempotencyKey = z
  .string()
  .regex(IDEMPOTENCY_KEY_PATTERN, 'must be 1-255 visible ASCII characters')
  .describe(
    'Your own key for this call (1-255 visible ASCII characters). Retrying with the same key and the same arguments returns the first answer and never does the work twice (never buys twice); the same key with other arguments is refused with idempotency_key_reused.',
  );

/** The input a client sends: a tool that changes something also takes `idempotency_key`. */
export function inputOf(tool: Tool): z.ZodObject {
  return tool.kind === 'read' ? tool.input : tool.input.extend({ idempotency_key: IdempotencyKey.optional() });
}

// Each helper only fixes the kind, so a tool file is checked against its own input schema.
export const readTool = <I extends InputShape>(t: Omit<ReadTool<I>, 'kind'>): Tool => ({ ...t, kind: 'read' }) as unknown as Tool;
export const changeTool = <I extends InputShape>(t: Omit<ChangeTool<I>, 'kind'>): Tool => ({ ...t, kind: 'change' }) as unknown as Tool;
export const startTool = <I extends InputShape>(t: Omit<StartTool<I>, 'kind'>): Tool => ({ ...t, kind: 'start' }) as unknown as Tool;
