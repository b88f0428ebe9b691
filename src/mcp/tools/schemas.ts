/**
 * Output schemas the tools declare, for the JSON the API answers (README, Using it).
 * They name what a client may rely on and stay open (loose objects), so a field the
 * API adds later never makes a client reject an answer. Inputs reuse the API's own
 * zod schemas where the API has one (src/api/routes/*), so both check the same things.
 */
import { z } from 'zod';
import { OPERATION_STATUSES } from '../../domain/status.js';

export const OperationId = z.string().min(1).max(100).describe('An operation id, as tools and the API return it');

export const OperationOutput = z
  .object({
    id: z.string(),
    type: z.string().describe('The AdCP task, e.g. create_media_buy'),
    agent_id: z.string(),
    status: z.enum(OPERATION_STATUSES),
    needs_input: z.boolean().describe('True while a person must decide (see input_request and the dashboard link)'),
    input_request: z.unknown().describe('What a person is asked: {kind, message, allowed, …}; null unless needs_input'),
    stalled: z.boolean(),
    result: z.unknown(),
    error: z.unknown(),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .loose();

export const OperationPageOutput = z
  .object({
    operations: z.array(OperationOutput),
    next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last'),
  })
  .loose();

export const AgentListOutput = z
  .object({
    agents: z.array(z.object({ id: z.string(), name: z.string(), role: z.string(), url: z.string(), protocol: z.string() }).loose()),
  })
  .loose();

export const PlanOutput = z
  .object({
    plan_id: z.string(),
    agent_id: z.string(),
    status: z.string().describe('active | error | syncing'),
    version: z.number().nullable(),
  })
  .loose();

export const CampaignOutput = z
  .object({
    id: z.string(),
    status: z.string().describe('running | waiting_on_people | done'),
    plan_id: z.string(),
    buys: z.array(OperationOutput),
  })
  .loose();
