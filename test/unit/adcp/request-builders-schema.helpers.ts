/**
 * What the request-builder schema tests share (request-builders-*.test.ts): an agent of
 * each role, the options the engine builds operations with, an OperationService stand-in
 * that builds each operation as the real one does, and the check itself.
 *
 * The request checked is the wire request: buildOperation's stored body opened as the
 * send opens it, with everything we add (idempotency_key, context, webhooks).
 */
import { expect } from 'vitest';
import { requestIssues, type SchemaIssue } from '../../../src/adcp/request-schema.js';
import { buildOperation, type BuildOptions, type CreateOperationInput } from '../../../src/engine/operation-builder.js';
import type { OperationService } from '../../../src/engine/operation-service.js';
import { RequestSealer } from '../../../src/engine/sealed-request.js';
import type { AgentRow, MediaBuyRow, OperationRow } from '../../../src/store/index.js';
import { newMediaBuyRow } from '../../../src/store/media-buy-row.js';
import { SecretBox } from '../../../src/store/secret-box.js';

export const NOW = Date.parse('2026-06-01T12:00:00Z');
export const PUBLIC_URL = 'https://orch.example';
export const ACCOUNT = { account_id: 'acc_1' };
export const secrets = new SecretBox('unit-test-secret-key-0123456789');
export const sealer = new RequestSealer(secrets);

const agent = (id: string, role: string, url: string): AgentRow => ({ id, tenant_id: 't1', name: id, role, url, protocol: 'mcp', auth_token_enc: null, webhook_signing: null, created_at: 0 });
export const seller = agent('agt_seller', 'seller', 'https://seller.example/mcp');
export const governanceAgent = agent('agt_gov', 'governance', 'https://governance.example/mcp');

export const buildOptions: BuildOptions = { publicUrl: PUBLIC_URL, deadlinesMs: {}, instanceId: 'test-instance', leaseMs: 30_000 };

/** The request `input` becomes on the wire, for `to`. */
export function wireRequest(input: CreateOperationInput, to: AgentRow = seller): Record<string, unknown> {
  return sealer.open(buildOperation(input, to, secrets, buildOptions, NOW, false).row.request_body);
}

export interface Sent {
  task: string;
  request: Record<string, unknown>;
}

/** An OperationService whose createAndStart builds the row as the real one does and keeps its wire request. */
export function capturingOperations(to: AgentRow = seller): { operations: OperationService; sent: Sent[] } {
  const sent: Sent[] = [];
  const createAndStart = async (input: CreateOperationInput): Promise<OperationRow> => {
    const built = buildOperation(input, to, secrets, buildOptions, NOW, false);
    sent.push({ task: input.task, request: sealer.open(built.row.request_body) });
    return built.row;
  };
  return { operations: { createAndStart } as unknown as OperationService, sent };
}

/** A live buy as a completed create records it: its account, one package. */
export function liveBuy(over: Partial<MediaBuyRow> = {}): MediaBuyRow {
  return newMediaBuyRow(
    { id: 'buy_1', tenant_id: 't1', agent_id: seller.id, operation_id: 'op_create', media_buy_id: 'mb_1', created_at: NOW - 3_600_000 },
    { account: JSON.stringify(ACCOUNT), status: 'active', packages: JSON.stringify([{ package_id: 'pkg_1', product_id: 'prod_display', budget: 5000 }]), ...over },
  );
}

/** A 300×250 display creative as sync_creatives takes it. */
export function banner(creativeId: string, name: string): Record<string, unknown> {
  return {
    creative_id: creativeId,
    name,
    format_id: { agent_url: seller.url, id: 'display_300x250' },
    assets: { image: { asset_type: 'image', url: `https://cdn.example-brand.com/${creativeId}.png`, width: 300, height: 250 } },
  };
}

/** The 3.0.6 schema's issues with `params` as a `task` request: [] when a seller that validates takes it. */
export function issuesOf(task: string, params: Record<string, unknown>): SchemaIssue[] {
  const issues = requestIssues(task, params);
  expect(issues, `AdCP 3.0 has a request schema for ${task}`).not.toBeNull();
  return issues!;
}

/** The pointers of the issues, for the broken-input cases: which field the schema refused. */
export function pointersOf(task: string, params: Record<string, unknown>): string[] {
  return issuesOf(task, params).map((i) => i.pointer);
}
