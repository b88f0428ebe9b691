/** `adcp-orchestrator ops list|show|watch|respond`, through the HTTP API. */
import type { Command } from 'commander';
import { apiOptions, apiTarget, callApi } from '../api-client.js';

interface Op {
  id: string;
  type: string;
  status: string;
  task_id: string | null;
  needs_input: boolean;
  stalled: boolean;
  updated_at: string;
  events?: Array<{ at: string; source: string; kind: string; from: string | null; to: string | null }>;
}

const line = (o: Op) =>
  `${o.id}  ${o.type.padEnd(18)} ${o.status.padEnd(15)} ${o.task_id ?? '-'}${o.needs_input ? '  [needs input]' : ''}${o.stalled ? '  [stalled]' : ''}\n`;

export function registerOpsCommands(program: Command): void {
  const ops = program.command('ops').description('inspect operations');
  apiOptions(ops.command('list').description('list operations, newest first').option('--status <status>').option('--limit <n>', 'how many', '50')).action(async (o) => {
    const q = new URLSearchParams({ limit: o.limit, ...(o.status ? { status: o.status } : {}) });
    const { operations } = await callApi<{ operations: Op[] }>(apiTarget(o), 'GET', `/v1/operations?${q}`);
    for (const op of operations) process.stdout.write(line(op));
  });
  apiOptions(ops.command('show <id>').description('show an operation and its history')).action(async (id: string, o) => {
    const op = await callApi<Op>(apiTarget(o), 'GET', `/v1/operations/${encodeURIComponent(id)}`);
    process.stdout.write(`${JSON.stringify(op, null, 2)}\n`);
  });
  apiOptions(
    ops
      .command('respond <id>')
      .description('answer what an operation waits for: --approve, --reject, or --params JSON (corrections)')
      .option('--approve', 'approve as it is')
      .option('--reject', 'reject (a spend approval needs --message)')
      .option('--params <json>', 'respond with corrections to the request, a JSON object')
      .option('--message <text>', 'a note recorded with the answer'),
  ).action(async (id: string, o) => {
    const chosen = [o.approve && 'approve', o.reject && 'reject', o.params !== undefined && 'respond'].filter(Boolean);
    if (chosen.length !== 1) throw new Error('give exactly one of --approve, --reject, --params JSON');
    const body: Record<string, unknown> = { decision: chosen[0] };
    if (o.params !== undefined) {
      let params: unknown;
      try {
        params = JSON.parse(o.params);
      } catch {
        throw new Error('--params is not valid JSON');
      }
      if (typeof params !== 'object' || params === null || Array.isArray(params)) throw new Error('--params must be a JSON object');
      body.params = params;
    }
    if (o.message !== undefined) body.message = o.message;
    const op = await callApi<Op>(apiTarget(o), 'POST', `/v1/operations/${encodeURIComponent(id)}/input`, body);
    process.stdout.write(line(op));
  });
  apiOptions(ops.command('watch <id>').description('follow an operation until it ends').option('--interval <ms>', 'poll interval', '1000')).action(async (id: string, o) => {
    const target = apiTarget(o);
    let seen = 0;
    for (;;) {
      const op = await callApi<Op>(target, 'GET', `/v1/operations/${encodeURIComponent(id)}`);
      for (const e of (op.events ?? []).slice(seen)) process.stdout.write(`${e.at}  ${e.source.padEnd(8)} ${e.kind.padEnd(12)} ${e.from ?? ''} -> ${e.to ?? ''}\n`);
      seen = op.events?.length ?? 0;
      if (['completed', 'failed', 'canceled', 'rejected'].includes(op.status)) return;
      await new Promise((r) => setTimeout(r, Number(o.interval)));
    }
  });
}
