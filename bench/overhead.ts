/**
 * The orchestrator's own overhead on a create_media_buy (BENCHMARKS.md, Targets: ≤ 1.2×
 * calling the same local seller directly with the SDK).
 *
 * Seller: the project's sandbox seller (src/sandbox/run-seller.ts, built on the
 * SDK's server), in its own process, product `sandbox_instant` (answers
 * `completed` at once). Orchestrator: createApp in this process (SQLite FULL,
 * no webhook: ADCP_ORCH_PUBLIC_URL unset). Client: a third process that runs,
 * in turn,
 *   - direct, SDK: `callMCPTool` from @adcp/sdk (connection cached by the SDK);
 *   - direct, our client: createAdcpClient().callTask from src/adcp (what the
 *     orchestrator itself uses; informational);
 *   - through the orchestrator: POST /v1/media-buys (202 with status completed
 *     once the seller's synchronous reply is stored).
 * Sequential latency (p50/p99) and throughput at concurrency 8, in two alternating
 * rounds per path (the ratios are the figures that count on a shared machine).
 *
 *   npx tsx bench/overhead.ts [--n 300] [--seconds 8]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { fmt, log, machineLine, nextMessage, onStdinMessages, percentile, printResults, reply, send, spawnTs } from './lib/common.js';
import { addAgent, startBenchApp } from './lib/orchestrator.js';
import { enableSqlTiming, sqlTimingReport } from './lib/sql-timing.js';

const { values } = parseArgs({ options: { client: { type: 'boolean' }, n: { type: 'string', default: '300' }, seconds: { type: 'string', default: '8' } } });
const N = Number(values.n);
const SECONDS = Number(values.seconds);
const CONCURRENCY = 8;

function mediaBuyRequest(): Record<string, unknown> {
  return {
    account: { account_id: 'acc_bench' },
    brand: { domain: 'example-brand.com' },
    start_time: 'asap',
    end_time: '2027-12-31T23:59:59Z',
    packages: [{ product_id: 'sandbox_instant', pricing_option_id: 'cpm_std', budget: 40000 }],
  };
}

interface PathResult {
  label: string;
  p50: number;
  p99: number;
  seqPerSecond: number;
  concPerSecond: number;
  sample?: string;
}

if (values.client) {
  // ---- client process ----
  const { callMCPTool } = await import('@adcp/sdk');
  const { createAdcpClient } = await import('../src/adcp/client.js');
  const ours = createAdcpClient();
  onStdinMessages(async (m: { sellerUrl: string; orchUrl: string; apiKey: string; agentId: string }) => {
    const paths: Record<string, () => Promise<string>> = {
      'direct, @adcp/sdk callMCPTool': async () => {
        const r = (await callMCPTool(m.sellerUrl, 'create_media_buy', { ...mediaBuyRequest(), idempotency_key: randomUUID() })) as any;
        const body = r?.structuredContent ?? r;
        if (!body || JSON.stringify(body).indexOf('media_buy_id') < 0) throw new Error(`SDK reply without media_buy_id: ${JSON.stringify(r).slice(0, 200)}`);
        return 'ok';
      },
      'direct, src/adcp createAdcpClient().callTask': async () => {
        const r = await ours.callTask({ url: m.sellerUrl, protocol: 'mcp' } as any, 'create_media_buy', { ...mediaBuyRequest(), idempotency_key: randomUUID() }, { timeoutMs: 10_000 });
        if (r.status !== 'completed') throw new Error(`our client: ${r.status}`);
        return 'ok';
      },
      'orchestrator, POST /v1/media-buys': async () => {
        const res = await fetch(`${m.orchUrl}/v1/media-buys`, {
          method: 'POST',
          headers: { authorization: `Bearer ${m.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ agent_id: m.agentId, request: mediaBuyRequest() }),
        });
        const body = (await res.json()) as { status?: string };
        if (res.status !== 202 || body.status !== 'completed') throw new Error(`orchestrator: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
        return 'ok';
      },
    };
    // Alternating rounds (each path in turn, twice) so every path sees the same machine.
    const ROUNDS = 2;
    const lat: Record<string, number[]> = {};
    const seq: Record<string, { n: number; ms: number }> = {};
    const conc: Record<string, { n: number; ms: number }> = {};
    for (const [label, call] of Object.entries(paths)) {
      for (let i = 0; i < 30; i++) await call(); // warm-up
      lat[label] = [];
      seq[label] = { n: 0, ms: 0 };
      conc[label] = { n: 0, ms: 0 };
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const [label, call] of Object.entries(paths)) {
        const t0 = performance.now();
        for (let i = 0; i < N / ROUNDS; i++) {
          const t = performance.now();
          await call();
          lat[label].push(performance.now() - t);
        }
        seq[label].n += N / ROUNDS;
        seq[label].ms += performance.now() - t0;
        let done = 0;
        const c0 = performance.now();
        const end = c0 + (SECONDS * 1000) / ROUNDS;
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (performance.now() < end) {
              await call();
              done++;
            }
          }),
        );
        conc[label].n += done;
        conc[label].ms += performance.now() - c0;
      }
    }
    const results: PathResult[] = Object.keys(paths).map((label) => ({
      label,
      p50: percentile(lat[label], 50),
      p99: percentile(lat[label], 99),
      seqPerSecond: seq[label].n / (seq[label].ms / 1000),
      concPerSecond: conc[label].n / (conc[label].ms / 1000),
    }));
    await ours.close();
    reply({ results });
    setTimeout(() => process.exit(0), 100);
  });
} else {
  // ---- parent: seller process, orchestrator here, client process ----
  log(`machine: ${machineLine()}`);
  // BENCH_SQL_TIMING=1: also print time per SQL statement of the orchestrator (this process).
  if (process.env.BENCH_SQL_TIMING === '1') enableSqlTiming();
  const sellerProc = spawnTs('src/sandbox/run-seller.ts', ['--no-a2a']);
  const { url: sellerUrl } = await nextMessage<{ url: string }>(sellerProc, (m) => 'url' in m);
  const bench = await startBenchApp({ env: { ADCP_ORCH_SYNC_WAIT_MS: '10000' } });
  const agentId = await addAgent(bench, sellerUrl);
  const client = spawnTs('bench/overhead.ts', ['--client', '--n', String(N), '--seconds', String(SECONDS)]);
  send(client, { sellerUrl, orchUrl: bench.url, apiKey: bench.apiKey, agentId });
  const { results } = await nextMessage<{ results: PathResult[] }>(client, (m) => 'results' in m, 600_000);
  sellerProc.kill('SIGTERM');
  await bench.close();
  if (process.env.BENCH_SQL_TIMING === '1') log(sqlTimingReport(20));

  for (const r of results) log(`${r.label}: p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, sequential ${fmt(r.seqPerSecond)}/s, concurrency ${CONCURRENCY} ${fmt(r.concPerSecond)}/s`);
  const sdk = results[0];
  const ourClient = results[1];
  const orch = results[2];
  const ratio50 = orch.p50 / sdk.p50;
  const ratioThroughput = sdk.concPerSecond / orch.concPerSecond;
  printResults(`overhead (${machineLine()}; seller: sandbox seller (SDK server) in its own process, sandbox_instant; client in a third process; ${N} sequential + ${SECONDS} s at concurrency ${CONCURRENCY})`, [
    { figure: 'direct SDK (callMCPTool) p50 / p99', value: `${sdk.p50.toFixed(2)} / ${sdk.p99.toFixed(2)} ms` },
    { figure: 'direct src/adcp client p50 / p99', value: `${ourClient.p50.toFixed(2)} / ${ourClient.p99.toFixed(2)} ms` },
    { figure: 'orchestrator POST /v1/media-buys p50 / p99', value: `${orch.p50.toFixed(2)} / ${orch.p99.toFixed(2)} ms` },
    { figure: 'latency ratio orchestrator / SDK (p50)', value: `${ratio50.toFixed(2)}×`, target: '≤ 1.2×', pass: ratio50 <= 1.2 },
    { figure: 'latency ratio orchestrator / SDK (p99)', value: `${(orch.p99 / sdk.p99).toFixed(2)}×`, target: '≤ 1.2×', pass: orch.p99 / sdk.p99 <= 1.2 },
    { figure: `throughput at concurrency ${CONCURRENCY}: SDK / src client / orchestrator`, value: `${fmt(sdk.concPerSecond)} / ${fmt(ourClient.concPerSecond)} / ${fmt(orch.concPerSecond)} /s` },
    { figure: 'throughput ratio SDK / orchestrator', value: `${ratioThroughput.toFixed(2)}×`, target: '≤ 1.2×', pass: ratioThroughput <= 1.2 },
  ]);
  process.exit(0);
}
