/** `adcp-orchestrator reconcile [--agent ID]`: asks a running server to reconcile now and prints one line per seller (or the reports as JSON). */
import type { Command } from 'commander';
import { apiOptions, apiTarget, callApi, type ApiCommandOptions } from '../api-client.js';
import { printJson } from '../operation-view.js';

interface Report {
  agent_id: string;
  error?: { code: string; message: string };
  orphaned_on_server?: string[];
  missing_from_server?: string[];
  deferred_orphans?: string[];
  total_pending_server?: number;
  total_pending_local?: number;
}

const count = (list: unknown[] | undefined) => list?.length ?? 0;

export function registerReconcileCommand(program: Command): void {
  apiOptions(
    program
      .command('reconcile')
      .description("compare our pending operations with each seller's task list now; adopts orphans, polls the missing")
      .option('--agent <id>', 'only this agent'),
  ).action(async (o: ApiCommandOptions & { agent?: string }) => {
    const body = o.agent ? { agent_id: o.agent } : {};
    const res = await callApi<{ reports: Report[] }>(apiTarget(o), 'POST', '/v1/reconcile', body);
    if (o.json) return printJson(res);
    for (const r of res.reports) {
      if (r.error) {
        process.stdout.write(`${r.agent_id}  not reconciled: ${r.error.code}: ${r.error.message}\n`);
        continue;
      }
      process.stdout.write(
        `${r.agent_id}  pending here ${r.total_pending_local ?? 0}, at the seller ${r.total_pending_server ?? 0}; ` +
          `adopted ${count(r.orphaned_on_server)}, missing at the seller ${count(r.missing_from_server)}, deferred ${count(r.deferred_orphans)}\n`,
      );
    }
  });
}
