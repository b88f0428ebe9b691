/**
 * Steady API load for fault tests: a few workers that each, in turn, create a media
 * buy (a unique `idempotency_key` in the request, so its fate can be traced to the
 * seller), list operations, read one back, and (one of them) render a dashboard page,
 * with /healthz and /readyz sampled alongside. Every answer is kept with when it
 * started and ended, so a test can say what was answered while its fault lasted.
 */
import { randomUUID } from 'node:crypto';
import type { DashboardClient } from './dashboard-client.js';
import { mediaBuyRequest } from './media-buy.js';

export type SampleKind = 'create' | 'list' | 'get' | 'dashboard' | 'healthz' | 'readyz';

export interface Sample {
  kind: SampleKind;
  startedAt: number;
  endedAt: number;
  /** 0: no answer (the connection failed or the 15 s limit passed). */
  status: number;
  /** `error.code` of a JSON error body. */
  code?: string;
  retryAfter?: string | null;
  /** create: the AdCP idempotency_key it carried; the body it sent, for a retry. */
  key?: string;
  request?: unknown;
  text?: string;
}

export interface ApiLoadOptions {
  url: string;
  apiKey: string;
  agentId: string;
  /** Products to create buys of, in turn. */
  products: string[];
  workers: number;
  /** Pause between one worker's rounds, so the load is steady rather than as fast as the machine goes. */
  pauseMs: number;
  /** Signed in: one worker also renders /operations. */
  dashboard?: DashboardClient;
}

const LIMIT_MS = 15_000;

export class ApiLoad {
  readonly samples: Sample[] = [];
  private running = false;
  private workers: Promise<void>[] = [];
  private made = 0;

  constructor(private readonly opts: ApiLoadOptions) {}

  start(): void {
    this.running = true;
    this.workers = Array.from({ length: this.opts.workers }, (_, i) => this.worker(i));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
  }

  /** Samples whose request started at or after `from` and was answered by `to`. */
  within(from: number, to: number): Sample[] {
    return this.samples.filter((s) => s.startedAt >= from && s.endedAt <= to);
  }

  /** Sends a create again with the body it first carried (a client retrying after a 503). */
  retry(sample: Sample): Promise<Sample> {
    return this.call('create', 'POST', '/v1/media-buys', sample.request, sample.key);
  }

  private async worker(index: number): Promise<void> {
    let lastId: string | undefined;
    while (this.running) {
      const product = this.opts.products[this.made++ % this.opts.products.length]!;
      const key = `outage-${randomUUID()}`;
      const created = await this.call('create', 'POST', '/v1/media-buys', { agent_id: this.opts.agentId, request: mediaBuyRequest(product, { idempotency_key: key }) }, key);
      if (created.status === 202 || created.status === 200) lastId = JSON.parse(created.text!).id;
      await this.call('list', 'GET', '/v1/operations?limit=5');
      if (lastId) await this.call('get', 'GET', `/v1/operations/${lastId}`);
      if (index === 0) {
        await this.call('healthz', 'GET', '/healthz');
        await this.call('readyz', 'GET', '/readyz');
        if (this.opts.dashboard) await this.dashboardPage();
      }
      await new Promise((r) => setTimeout(r, this.opts.pauseMs));
    }
  }

  private async call(kind: SampleKind, method: string, path: string, body?: unknown, key?: string): Promise<Sample> {
    const startedAt = Date.now();
    const sample: Sample = { kind, startedAt, endedAt: startedAt, status: 0, ...(key ? { key, request: body } : {}) };
    try {
      const res = await fetch(`${this.opts.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.opts.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(LIMIT_MS),
      });
      sample.status = res.status;
      sample.retryAfter = res.headers.get('retry-after');
      sample.text = await res.text();
      if (res.status >= 400) sample.code = codeOf(sample.text);
    } catch (err) {
      sample.text = String(err);
    }
    sample.endedAt = Date.now();
    this.samples.push(sample);
    return sample;
  }

  private async dashboardPage(): Promise<void> {
    const startedAt = Date.now();
    const sample: Sample = { kind: 'dashboard', startedAt, endedAt: startedAt, status: 0 };
    try {
      const res = await this.opts.dashboard!.get('/operations');
      sample.status = res.status;
      sample.retryAfter = res.headers.get('retry-after');
      sample.text = res.text;
    } catch (err) {
      sample.text = String(err);
    }
    sample.endedAt = Date.now();
    this.samples.push(sample);
  }
}

function codeOf(text: string): string | undefined {
  try {
    return JSON.parse(text)?.error?.code;
  } catch {
    return undefined;
  }
}
