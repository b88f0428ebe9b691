/**
 * The sandbox sellers for bench/soak.ts, in their own process: the project's SDK-built
 * seller (RFC 9421 / HMAC webhooks, every webhook delivered twice with the same
 * idempotency_key so deduplication is exercised too), twice: one spoken to over MCP,
 * one over A2A. Two, because one seller behind two agent registrations would list
 * each registration's tasks to the other's reconciliation as orphans.
 *
 *   node --import tsx bench/lib/soak-seller.ts --submitted-delay-ms 20000
 *
 * stdout: first {"url","jwksUrl","a2aUrl","a2aJwksUrl"}; then, for each stdin line
 * {"cmd":"webhooks"}, {"webhooks": [...]} once no delivery is in flight (each
 * {task_id, status, idempotency_key, acknowledged}), and for {"cmd":"counts"}
 * {"counts": {tasks, mediaBuys, polls, webhooks}}.
 */
import { parseArgs } from 'node:util';
import { startSandboxSeller } from '../../src/sandbox/seller.js';
import { onStdinMessages, reply } from './common.js';

const { values } = parseArgs({ options: { 'submitted-delay-ms': { type: 'string', default: '20000' }, 'working-delay-ms': { type: 'string', default: '6000' } } });
const options = {
  submittedDelayMs: Number(values['submitted-delay-ms']),
  workingDelayMs: Number(values['working-delay-ms']),
  duplicateWebhooks: true,
  // Retries outlast a restart of the orchestrator (tens of seconds): 0.5+1+2+4+8+8+8+8+8 s.
  webhookRetry: { maxAttempts: 10, initialDelayMs: 500, maxDelayMs: 8_000 },
};
const mcpSeller = await startSandboxSeller({ ...options, a2a: false });
const a2aSeller = await startSandboxSeller(options);
const sellers = [mcpSeller, a2aSeller];
reply({ url: mcpSeller.url, jwksUrl: mcpSeller.jwksUrl, a2aUrl: a2aSeller.a2aUrl, a2aJwksUrl: a2aSeller.jwksUrl });

onStdinMessages(async (m: { cmd: string }) => {
  if (m.cmd === 'webhooks') {
    await Promise.all(sellers.map((s) => s.webhooksSettled()));
    const webhooks = sellers.flatMap((s) => s.stats().webhooks).map((w) => ({
      task_id: w.task_id,
      status: w.status,
      idempotency_key: w.idempotency_key,
      duplicate: w.duplicate,
      acknowledged: w.delivered && w.final_status !== undefined && w.final_status >= 200 && w.final_status < 300,
      final_status: w.final_status,
    }));
    reply({ webhooks });
  } else if (m.cmd === 'counts') {
    const all = sellers.map((s) => s.stats());
    const sum = (f: (s: (typeof all)[number]) => number) => all.reduce((n, s) => n + f(s), 0);
    reply({ counts: { tasks: sum((s) => s.tasks), mediaBuys: sum((s) => s.mediaBuysCreated), polls: sum((s) => s.pollLog.length), webhooks: sum((s) => s.webhooks.length) } });
  }
});

for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void Promise.all(sellers.map((s) => s.close())).then(() => process.exit(0)));
