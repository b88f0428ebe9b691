/** `adcp-orchestrator reconcile [--agent ID]`: asks a running server to reconcile now and prints the report(s) as JSON. */
import type { Command } from 'commander';
import { apiOptions, apiTarget, callApi } from '../api-client.js';

export function registerReconcileCommand(program: Command): void {
  apiOptions(
    program
      .command('reconcile')
      .description("compare our pending operations with each seller's task list now; adopts orphans, polls the missing")
      .option('--agent <id>', 'only this agent'),
  ).action(async (o) => {
    const body = o.agent ? { agent_id: o.agent } : {};
    const res = await callApi<{ reports: unknown[] }>(apiTarget(o), 'POST', '/v1/reconcile', body);
    process.stdout.write(`${JSON.stringify(res.reports, null, 2)}\n`);
  });
}
