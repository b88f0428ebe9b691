/**
 * A create_media_buy through the orchestrator against its durable floor (BENCHMARKS.md,
 * Targets: p50 ≤ 1.3× the floor; throughput at concurrency 8 ≥ 0.75× the floor).
 *
 * Seller: the project's sandbox seller (src/sandbox/run-seller.ts, built on the
 * SDK's server), in its own process, product `sandbox_instant` (answers
 * `completed` at once). Orchestrator: createApp in this process (SQLite FULL,
 * no webhook: ADCP_ORCH_PUBLIC_URL unset). Client: a third process that runs,
 * in turn,
 *   - the floor: the same call made with the SDK (`callMCPTool` from @adcp/sdk) to the
 *     same seller, with one durable commit before it (the request, stored before it is
 *     sent) and one after it (the reply, stored before it is answered), in a SQLite file
 *     of the client's (WAL + synchronous=FULL as shipped), group-committed once per turn
 *     of the event loop (bench/lib/floor-sqlite.ts) as our own commits are;
 *   - through the orchestrator: POST /v1/media-buys (202 with status completed
 *     once the seller's synchronous reply is stored);
 *   - information: the SDK call alone (no commit), and our client
 *     (createAdcpClient().callTask from src/adcp, what the orchestrator itself uses);
 *     and the floor behind an HTTP hop (bench/lib/create-hop-floor.ts: a bare Fastify
 *     endpoint in this process doing the floor's job, reached as we are), to split the
 *     distance into what the hop costs and what our service does beyond the floor.
 * Sequential latency (p50/p99) and throughput at concurrency 8, in two rounds per
 * path, the order of the paths reversed in the second round (the ratios are the
 * figures that count on a shared machine).
 *
 * Correctness: every call of every path got its media buy (a call without one stops
 * the bench); every floor call's request and reply are in its table.
 *
 *   npx tsx bench/overhead.ts [--n 300] [--seconds 8]
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fmt, log, machineLine, nextMessage, onStdinMessages, percentile, printResults, reply, send, spawnTs, tempDir } from './lib/common.js';
import { floorRows, ms, perSecond } from './lib/floor-report.js';
import { addAgent, startBenchApp } from './lib/orchestrator.js';
import { openCreateFloorStore, startHopFloor } from './lib/create-hop-floor.js';
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
  const floor = openCreateFloorStore(join(tempDir(), 'floor-calls.db'));
  let floorCalls = 0;
  const mediaBuyOf = (r: any) => {
    const body = r?.structuredContent ?? r;
    if (!body || JSON.stringify(body).indexOf('media_buy_id') < 0) throw new Error(`SDK reply without media_buy_id: ${JSON.stringify(r).slice(0, 200)}`);
    return body;
  };
  /** POST /v1/media-buys as a user's program would; 202 with the finished create, or the bench stops. */
  async function postCreate(url: string, key: string, body: unknown): Promise<string> {
    const res = await fetch(`${url}/v1/media-buys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await res.json()) as { status?: string };
    if (res.status !== 202 || answer.status !== 'completed') throw new Error(`${url}: ${res.status} ${JSON.stringify(answer).slice(0, 300)}`);
    return 'ok';
  }
  onStdinMessages(async (m: { sellerUrl: string; orchUrl: string; apiKey: string; agentId: string; hopFloor: { url: string; key: string } }) => {
    const paths: Record<string, () => Promise<string>> = {
      'floor: SDK callMCPTool, one durable commit before and one after': async () => {
        const request = { ...mediaBuyRequest(), idempotency_key: randomUUID() };
        const id = await floor.storeRequest(request);
        const body = mediaBuyOf(await callMCPTool(m.sellerUrl, 'create_media_buy', request));
        await floor.storeReply(id, body);
        floorCalls++;
        return 'ok';
      },
      'orchestrator, POST /v1/media-buys': () => postCreate(m.orchUrl, m.apiKey, { agent_id: m.agentId, request: mediaBuyRequest() }),
      'direct, @adcp/sdk callMCPTool': async () => {
        mediaBuyOf(await callMCPTool(m.sellerUrl, 'create_media_buy', { ...mediaBuyRequest(), idempotency_key: randomUUID() }));
        return 'ok';
      },
      'direct, src/adcp createAdcpClient().callTask': async () => {
        const r = await ours.callTask({ url: m.sellerUrl, protocol: 'mcp' } as any, 'create_media_buy', { ...mediaBuyRequest(), idempotency_key: randomUUID() }, { timeoutMs: 10_000 });
        if (r.status !== 'completed') throw new Error(`our client: ${r.status}`);
        return 'ok';
      },
      'floor behind an HTTP hop, POST /v1/media-buys': () => postCreate(m.hopFloor.url, m.hopFloor.key, { request: mediaBuyRequest() }),
    };
    // Each path in turn, twice, the order reversed the second time, so every path sees the same machine.
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
      const order = Object.entries(paths);
      for (const [label, call] of round % 2 === 0 ? order : order.reverse()) {
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
    const stored = floor.stored();
    floor.close();
    reply({ results, floorCheck: { calls: floorCalls, ...stored } });
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
  const hopFloor = await startHopFloor(sellerUrl, tempDir());
  const client = spawnTs('bench/overhead.ts', ['--client', '--n', String(N), '--seconds', String(SECONDS)]);
  send(client, { sellerUrl, orchUrl: bench.url, apiKey: bench.apiKey, agentId, hopFloor: { url: hopFloor.url, key: hopFloor.key } });
  const { results, floorCheck } = await nextMessage<{ results: PathResult[]; floorCheck: { calls: number; rows: number; replies: number } }>(client, (m) => 'results' in m, 600_000);
  sellerProc.kill('SIGTERM');
  const hopStored = hopFloor.stored();
  await hopFloor.close();
  await bench.close();
  if (process.env.BENCH_SQL_TIMING === '1') log(sqlTimingReport(20));

  for (const r of results) log(`${r.label}: p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, sequential ${fmt(r.seqPerSecond)}/s, concurrency ${CONCURRENCY} ${fmt(r.concPerSecond)}/s`);
  const [floor, orch, sdk, ourClient, hop] = results as [PathResult, PathResult, PathResult, PathResult, PathResult];
  const floorOk = floorCheck.rows === floorCheck.calls && floorCheck.replies === floorCheck.calls;
  const floorCheckRow = {
    figure: '  check, floor: every call stored before sent and its reply after (rows / replies / calls)',
    value: `${floorCheck.rows} / ${floorCheck.replies} / ${floorCheck.calls}`,
    target: 'equal',
    pass: floorOk,
  };
  printResults(`overhead (${machineLine()}; seller: sandbox seller (SDK server) in its own process, sandbox_instant; client in a third process; ${N} sequential + ${SECONDS} s at concurrency ${CONCURRENCY})`, [
    ...floorRows({ figure: 'create_media_buy, latency p50', floor: ms(floor.p50), ours: ms(orch.p50), ratio: orch.p50 / floor.p50, how: `${N} sequential calls in 2 rounds`, target: { cmp: '≤', value: 1.3 }, checksPassed: floorOk }),
    ...floorRows({
      figure: `create_media_buy, throughput at concurrency ${CONCURRENCY}`,
      floor: perSecond(floor.concPerSecond),
      ours: perSecond(orch.concPerSecond),
      ratio: orch.concPerSecond / floor.concPerSecond,
      how: `${SECONDS} s in 2 rounds`,
      target: { cmp: '≥', value: 0.75 },
      checksPassed: floorOk,
    }),
    { figure: '  information: p99 floor / ours', value: `${ms(floor.p99)} / ${ms(orch.p99)} = ${(orch.p99 / floor.p99).toFixed(2)}×` },
    { figure: '  information: SDK alone, no commit, p50 / p99; concurrency 8', value: `${ms(sdk.p50)} / ${ms(sdk.p99)}; ${perSecond(sdk.concPerSecond)}` },
    { figure: '  information: src/adcp client alone p50 / p99; concurrency 8', value: `${ms(ourClient.p50)} / ${ms(ourClient.p99)}; ${perSecond(ourClient.concPerSecond)}` },
    { figure: '  information: ours / SDK alone, p50; throughput', value: `${(orch.p50 / sdk.p50).toFixed(2)}×; ${(orch.concPerSecond / sdk.concPerSecond).toFixed(2)}×` },
    {
      figure: '  information: the floor behind an HTTP hop, p50; concurrency 8; its ÷ floor; ours ÷ it',
      value: `${ms(hop.p50)}; ${perSecond(hop.concPerSecond)}; p50 ${(hop.p50 / floor.p50).toFixed(2)}×, throughput ${(hop.concPerSecond / floor.concPerSecond).toFixed(2)}×; p50 ${(orch.p50 / hop.p50).toFixed(2)}×, throughput ${(orch.concPerSecond / hop.concPerSecond).toFixed(2)}×`,
    },
    floorCheckRow,
    {
      figure: '  check, floor behind the hop: every 202 stored before sent and its reply after (rows / replies / answered)',
      value: `${hopStored.rows} / ${hopStored.replies} / ${hopStored.answered}`,
      target: 'equal',
      pass: hopStored.rows === hopStored.answered && hopStored.replies === hopStored.answered,
    },
  ]);
  process.exit(0);
}
