/**
 * The ceiling of an ingest path on this machine: the engine and store alone, in the
 * bench's own process, with no HTTP and no signature check (the receiver's work after
 * authentication: the target read, the strict parse, one engine call), 64 in flight
 * like the load generator, over the same requests the load generator sends. No HTTP
 * layer on top can be faster. Beside the rate it gives the CPU time this process spent
 * per applied delivery, which a shared, noisy machine disturbs less than a rate: counted
 * until the background work the deliveries caused is done (a buy's status read a second
 * after its report, a completed create's first read: no buy due or leased any more), so
 * that it is charged to the round that caused it, not to the next one.
 */
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { App } from '../../src/app.js';
import { webhookFingerprint } from '../../src/webhooks/fingerprint.js';
import { parseDelivery } from '../../src/webhooks/parse-delivery.js';
import { strictJsonParse } from '../../src/webhooks/strict-json.js';

export interface Ceiling {
  applied: number;
  other: number;
  seconds: number;
  perSecond: number;
  /** CPU (user + system) of this process per applied delivery, µs. */
  cpuMicros: number;
}

/** Status reads come a second after a report: look for the work left no sooner than this after the load. */
const SETTLE_MIN_MS = 1_200;
const SETTLE_MAX_MS = 20_000;

/** Waits until no buy is due for a read or held by a reader (at most SETTLE_MAX_MS). */
export async function settle(app: App): Promise<void> {
  const started = Date.now();
  await new Promise((r) => setTimeout(r, SETTLE_MIN_MS));
  while (Date.now() - started < SETTLE_MAX_MS) {
    const now = Date.now();
    const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM media_buys WHERE next_check_at <= ${now} OR lease_until > ${now}`.execute(app.store.db.kysely);
    if (Number(rows[0]!.n) === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Request {
  token: string;
  body: Buffer;
}

function requests(file: string, pathPrefix: string): Request[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((line) => JSON.parse(line) as { path: string; body: string })
    .map((r) => ({ token: r.path.slice(pathPrefix.length), body: Buffer.from(r.body) }));
}

async function run(app: App, list: Request[], ms: number, one: (r: Request) => Promise<boolean>, inFlight = 64): Promise<Ceiling> {
  let next = 0;
  let applied = 0;
  let other = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const until = t0 + ms;
  const worker = async () => {
    while (next < list.length && performance.now() < until) {
      if (await one(list[next++]!)) applied++;
      else other++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - t0) / 1000;
  await settle(app);
  const cpu = process.cpuUsage(cpu0);
  return { applied, other, seconds, perSecond: applied / seconds, cpuMicros: (cpu.user + cpu.system) / Math.max(1, applied) };
}

/** Operation webhooks (`/webhooks/adcp/:token`) through WebhookIngest. */
export function operationWebhookCeiling(app: App, file: string, ms: number): Promise<Ceiling> {
  const ingest = app.webhookIngest;
  return run(app, requests(file, '/webhooks/adcp/'), ms, async (d) => {
    const operation = await ingest.target(d.token);
    const parsed = parseDelivery(d.body);
    if (!operation || !parsed.ok) throw new Error('ceiling: a seeded delivery did not resolve or parse');
    const outcome = await ingest.ingest({ operation, claims: parsed.payload, fingerprint: parsed.fingerprint, text: parsed.text });
    return outcome.kind === 'applied';
  });
}

/** Reporting fires (`/webhooks/adcp/reporting/:token`) through ReportIngest, read as the receiver reads them. */
export function reportingFireCeiling(app: App, file: string, ms: number): Promise<Ceiling> {
  const ingest = app.reportIngest;
  return run(app, requests(file, '/webhooks/adcp/reporting/'), ms, async (d) => {
    const target = await ingest.target(d.token);
    const parsed = strictJsonParse(d.body);
    if (!target || !parsed.ok) throw new Error('ceiling: a seeded fire did not resolve or parse');
    const read = ingest.read(parsed.value);
    if (!read.ok) throw new Error(`ceiling: a seeded fire did not read: ${read.message}`);
    const outcome = await ingest.ingest({ target, reading: read.reading, fingerprint: webhookFingerprint(parsed.value), text: parsed.text });
    return outcome.kind === 'applied' && outcome.applied === 1;
  });
}
