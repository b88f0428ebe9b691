/**
 * Diagnostic: CPU per poll of our AdCP client alone (createAdcpClient().getTask over the
 * lean MCP path) against a bare node:http poll, same local fast seller (its own process),
 * 64 in flight, rounds alternating. No store, no engine: the client's share of a poll
 * in bench/poll-dispatch.ts.
 *
 * With `--base DIR` (a checkout of another commit, e.g. `git worktree add /tmp/polls-base
 * <commit>` with node_modules linked) that tree's client runs too, in the same process
 * and rounds, for a before/after that sees the same machine.
 *
 *   npx tsx bench/poll-client-cost.ts [--rounds 6] [--polls 4000] [--token] [--base DIR]
 */
import { parseArgs } from 'node:util';
import { createAdcpClient } from '../src/adcp/client.js';
import type { AdcpClient } from '../src/adcp/types.js';
import { log, nextMessage, spawnTs } from './lib/common.js';
import { BarePoller } from './lib/bare-poll.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '6' },
    polls: { type: 'string', default: '4000' },
    // An agent with a bearer token (the bench seller ignores it): the session key hashes it.
    token: { type: 'boolean', default: false },
    base: { type: 'string' },
  },
});
const ROUNDS = Number(values.rounds);
const POLLS = Number(values.polls);
const CONCURRENCY = 64;

const seller = spawnTs('bench/lib/fast-seller.ts');
const { url } = await nextMessage<{ url: string }>(seller, (m) => 'url' in m);
const agent = { url, protocol: 'mcp' as const, ...(values.token ? { authToken: 'bench-token-0123456789' } : {}) };

const bare = new BarePoller(url);
/** The floor's poll without its store: one POST, the reply read and parsed (bench/lib/bare-poll.ts). */
const barePoll = async (taskId: string): Promise<void> => void (await bare.poll(taskId));

const clients: Array<[string, AdcpClient]> = [['ours', createAdcpClient({})]];
if (values.base) {
  const { createAdcpClient: createBase } = (await import(`${values.base}/src/adcp/client.ts`)) as { createAdcpClient: typeof createAdcpClient };
  clients.push(['base', createBase({})]);
}
const sides: Array<[string, (taskId: string) => Promise<unknown>]> = [
  ['bare', barePoll],
  ...clients.map(([name, c]): [string, (taskId: string) => Promise<unknown>] => [name, (taskId) => c.getTask(agent, taskId, { timeoutMs: 10_000 })]),
];

let seq = 0;
async function round(poll: (taskId: string) => Promise<unknown>, n: number): Promise<{ cpuUs: number; sysUs: number; perSecond: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let left = n;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await poll(`task_${seq++}`);
    }),
  );
  const d = process.cpuUsage(cpu0);
  return { cpuUs: (d.user + d.system) / n, sysUs: d.system / n, perSecond: n / ((performance.now() - t0) / 1000) };
}

// Warm every side (JIT, the MCP session and its tool list) before measuring.
for (const [, poll] of sides) await round(poll, 2000);
const sums = new Map(sides.map(([name]) => [name, 0]));
for (let r = 0; r < ROUNDS; r++) {
  // Order turned every other round, so no side always runs after the same one.
  for (const [name, poll] of r % 2 ? [...sides].reverse() : sides) {
    const x = await round(poll, POLLS);
    sums.set(name, sums.get(name)! + x.cpuUs);
    log(`round ${r + 1}: ${name} ${x.cpuUs.toFixed(0)} µs CPU/poll (${x.sysUs.toFixed(0)} system), ${x.perSecond.toFixed(0)}/s`);
  }
}
log(`mean CPU per poll: ${[...sums].map(([name, sum]) => `${name} ${(sum / ROUNDS).toFixed(0)} µs`).join(', ')}`);
for (const [, c] of clients) await c.close();
bare.close();
seller.kill();
process.exit(0);
