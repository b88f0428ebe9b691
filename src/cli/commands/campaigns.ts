/**
 * `campaigns create --file F | show ID` and `plans sync --agent ID --file F | show PLAN_ID`:
 * the governed campaign API (POST /v1/campaigns, GET /v1/campaigns/:id) and planning
 * (POST /v1/plans, GET /v1/plans/:plan_id) from the command line. A file of `-` is
 * standard input; its JSON is the API's request body (campaigns) or a list of plans.
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { apiOptions, apiTarget, callApi, type ApiCommandOptions } from '../api-client.js';
import { UsageError } from '../cli-errors.js';
import { printJson } from '../operation-view.js';

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not JSON`);
  }
}

/** One line per buy: its state in the campaign, its status, what was committed for it. */
export function campaignLines(c: any): string {
  const lines = [
    `${c.id}  ${c.status}  plan ${c.plan_id}  planned ${c.budget.planned}  committed ${c.budget.committed}${c.budget.remaining === null ? '' : `  plan remaining ${c.budget.remaining}`}${c.name ? `  "${c.name}"` : ''}`,
  ];
  for (const b of c.buys) {
    const committed = b.governance?.outcome?.committed_budget;
    const why = b.error?.code ? `  ${b.error.code}` : '';
    lines.push(`  ${b.id}  ${String(b.campaign_state).padEnd(17)} ${String(b.status).padEnd(14)} agent ${b.agent_id}${committed !== undefined && committed !== null ? `  committed ${committed}` : ''}${why}`);
  }
  return `${lines.join('\n')}\n`;
}

export function registerCampaignCommands(program: Command): void {
  const campaigns = program.command('campaigns').description('governed campaigns: buys across sellers under one plan');
  apiOptions(campaigns.command('create').description('start a campaign (the JSON body of POST /v1/campaigns)').requiredOption('--file <path>', 'JSON file, or - for standard input')).action(
    async (o: ApiCommandOptions & { file: string }) => {
      const c = await callApi<any>(apiTarget(o), 'POST', '/v1/campaigns', readJson(o.file));
      if (o.json) return printJson(c);
      process.stdout.write(campaignLines(c));
    },
  );
  apiOptions(campaigns.command('show').description('a campaign: its state, budget and buys').argument('<id>')).action(async (id: string, o: ApiCommandOptions) => {
    const c = await callApi<any>(apiTarget(o), 'GET', `/v1/campaigns/${encodeURIComponent(id)}`);
    if (o.json) return printJson(c);
    process.stdout.write(campaignLines(c));
  });

  const plans = program.command('plans').description('plans at a governance agent');
  apiOptions(
    plans
      .command('sync')
      .description('sync_plans to a governance agent (a JSON list of plans, or one plan)')
      .requiredOption('--agent <id>', 'the governance agent')
      .requiredOption('--file <path>', 'JSON file, or - for standard input'),
  ).action(async (o: ApiCommandOptions & { agent: string; file: string }) => {
    const body = readJson(o.file);
    const op = await callApi<any>(apiTarget(o), 'POST', '/v1/plans', { agent_id: o.agent, plans: Array.isArray(body) ? body : [body] });
    if (o.json) return printJson(op);
    process.stdout.write(`${op.id}  sync_plans  ${op.status}\n`);
  });
  apiOptions(plans.command('show').description('what the governance agent last accepted of a plan').argument('<plan_id>').option('--agent <id>', 'the governance agent')).action(
    async (planId: string, o: ApiCommandOptions & { agent?: string }) => {
      const v = await callApi<any>(apiTarget(o), 'GET', `/v1/plans/${encodeURIComponent(planId)}${o.agent ? `?agent_id=${encodeURIComponent(o.agent)}` : ''}`);
      if (o.json) return printJson(v);
      process.stdout.write(`${v.plan_id}  ${v.status}  version ${v.version ?? '-'}  agent ${v.agent_id}${v.last_sync?.errors?.length ? `  errors ${v.last_sync.errors.map((e: any) => e.code).join(',')}` : ''}\n`);
    },
  );
}
