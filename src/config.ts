/**
 * Configuration from the environment (README.md, Configuration), validated once at start.
 * A bad value stops the process with a message naming the variable.
 */
import { z } from 'zod';

const intMs = (def: number) =>
  z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .nonnegative('must not be negative')
    .default(def);

const count = (min: number, max: number, def: number) =>
  z.coerce
    .number({ message: 'must be a number' })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`)
    .default(def);

const databaseUrl = z
  .string()
  .default('sqlite:./data/orchestrator.db')
  .refine((v) => /^sqlite:/.test(v) || /^postgres(ql)?:\/\//.test(v), {
    message: 'must start with sqlite: or postgres://',
  });

const optionalUrl = z
  .string()
  .url('must be an absolute URL such as https://orch.example.net')
  .transform((v) => v.replace(/\/+$/, ''))
  .optional();

export const ConfigSchema = z.object({
  ADCP_ORCH_DATABASE_URL: databaseUrl,
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('127.0.0.1'),
  ADCP_ORCH_PUBLIC_URL: optionalUrl,
  ADCP_ORCH_SECRET_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
  ADCP_ORCH_API_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `auto`: readable lines on a terminal, JSON otherwise; `json` or `pretty` to force one. */
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  ADCP_ORCH_POLL_INTERVAL_MS: intMs(30_000),
  ADCP_ORCH_BACKUP_POLL_AFTER_MS: intMs(120_000),
  /** Periodic reconciliation with each seller (and once shortly after start); 0 turns both off. */
  ADCP_ORCH_RECONCILE_INTERVAL_MS: intMs(900_000),
  /** How often each agent is asked again for its capabilities (get_adcp_capabilities; also at registration and on refresh). */
  ADCP_ORCH_CAPABILITIES_REFRESH_MS: intMs(21_600_000),
  /** Tasks asked of a seller per list_tasks page while reconciling (the spec allows 1–100). */
  ADCP_ORCH_RECONCILE_PAGE_SIZE: z.coerce.number().int().min(1).max(100).default(100),
  /** How long a `working` reply is left alone before polling starts (AdCP spec, polling, timeouts, retries, reconciliation: ~5 min). */
  ADCP_ORCH_WORKING_TIMEOUT_MS: intMs(300_000),
  /** Longest wait for one call to an agent before the send counts as ambiguous. */
  ADCP_ORCH_CALL_TIMEOUT_MS: intMs(30_000),
  /** How long POST /v1/operations waits for the first reply before answering 202 anyway. */
  ADCP_ORCH_SYNC_WAIT_MS: intMs(10_000),
  /**
   * How long an MCP tool that starts an operation, called without asking for a task, waits for
   * it to end, need a person or be queued at the seller before it answers with the operation as it
   * stands (the caller then follows it with wait_for_operation). At most 20 s.
   */
  ADCP_ORCH_MCP_WAIT_MS: intMs(20_000).pipe(z.number().max(20_000, 'must be at most 20000 (20 s)')),
  /**
   * The largest reply read from an agent, in bytes (src/adcp/reply-limit.ts says why 4 MiB). A
   * larger one is not read: the call ends with `reply_too_large`. At least 64 KiB.
   */
  ADCP_ORCH_MAX_REPLY_BYTES: z.coerce
    .number({ message: 'must be a number of bytes' })
    .int('must be a whole number of bytes')
    .min(65_536, 'must be at least 65536 (64 KiB)')
    .max(1_073_741_824, 'must be at most 1073741824 (1 GiB)')
    .default(4 * 1024 * 1024),
  /**
   * Calls to one agent running at once in this process (src/engine/agent-bulkheads.ts), so no
   * agent holds more of our connections than this, however slowly it answers.
   */
  ADCP_ORCH_AGENT_MAX_CONCURRENT_CALLS: count(1, 1_024, 32),
  /** Calls to one agent that may wait for a slot (each at most the call timeout); more are put off briefly. */
  ADCP_ORCH_AGENT_MAX_QUEUED_CALLS: count(0, 100_000, 256),
  /** Polls of one task before it is marked stalled (then reconciled slowly). */
  ADCP_ORCH_MAX_POLLS: z.coerce.number().int().positive().default(2_000),
  /** Let webhook key discovery (jwks_uri, brand.json) reach loopback/private addresses: sandboxes and tests only. */
  ADCP_ORCH_ALLOW_PRIVATE_NETWORK: z
    .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  /** Tries of one send or poll that fails transiently (retried with backoff, never before retry_after) before escalating. */
  ADCP_ORCH_RETRY_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(3),
  /** Consecutive transient failures of one agent that open its circuit breaker. */
  ADCP_ORCH_BREAKER_THRESHOLD: z.coerce.number().int().min(1).default(5),
  /** How long an open breaker waits before letting one probe through (half-open). */
  ADCP_ORCH_BREAKER_HALF_OPEN_MS: intMs(30_000),
  /**
   * How long sellers keep idempotency replays (AdCP recommends 24 h). An ambiguous send older
   * than this is not resent blindly: a resend could buy twice, so it is escalated instead.
   */
  ADCP_ORCH_REPLAY_WINDOW_MS: intMs(86_400_000),
  /**
   * How long an API `Idempotency-Key` is remembered (replayed, or 409 for another body);
   * older records are deleted. At least 5 minutes: longer than any request can run, so a
   * key is never forgotten while its first request is still in progress.
   */
  ADCP_ORCH_API_IDEMPOTENCY_TTL_MS: z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(300_000, 'must be at least 300000 (5 minutes)')
    .default(86_400_000),
  /** Benchmarks only: serve POST /debug/gc (admin key; needs node --expose-gc). Off by default. */
  ADCP_ORCH_DEBUG_GC: z
    .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  /** After a start, the scheduler ramps up over this long, with jitter, instead of firing all overdue work at once. */
  ADCP_ORCH_WARMUP_MS: intMs(5_000),
  /**
   * A request waiting for a person is first brought up again after this long, then after twice
   * as long each time (src/domain/input-timers.ts). At least 100 ms: 0 would remind without end.
   */
  ADCP_ORCH_INPUT_REMINDER_MS: intMs(300_000).pipe(z.number().min(100, 'must be at least 100 milliseconds')),
  /** Overall deadlines per task type, JSON {"create_media_buy": 86400000, ...}, merged over the defaults. */
  ADCP_ORCH_DEADLINES_MS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (!v) return {} as Record<string, number>;
      try {
        const parsed = JSON.parse(v);
        const ok = parsed && typeof parsed === 'object' && !Array.isArray(parsed) && Object.values(parsed).every((n) => Number.isInteger(n) && (n as number) > 0);
        if (ok) return parsed as Record<string, number>;
      } catch {
        /* reported below */
      }
      ctx.addIssue({ code: 'custom', message: 'must be a JSON object of task name → positive milliseconds' });
      return z.NEVER;
    }),
  /**
   * An instance whose heartbeat is older than this is dead: on PostgreSQL any live instance then
   * removes it and releases its leases at once; on SQLite a second `serve` may take the file over.
   * Heartbeats go every quarter of it (jittered).
   */
  ADCP_ORCH_INSTANCE_DEAD_AFTER_MS: z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(1_000, 'must be at least 1000 ms (heartbeats go every quarter of it)')
    .max(3_600_000, 'must be at most 3600000 ms (an hour)')
    .default(10_000),
  /** Scheduler tick when nothing woke it earlier. */
  ADCP_ORCH_SCHEDULER_TICK_MS: intMs(1_000),
  /** How often an SSE stream reads the database even without a wake-up (covers a lost NOTIFY). */
  ADCP_ORCH_SSE_FALLBACK_POLL_MS: intMs(1_000),
  /** How often an SSE stream gets a `: heartbeat` comment, so proxies keep an idle stream open. */
  ADCP_ORCH_SSE_HEARTBEAT_MS: z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(10, 'must be at least 10 ms')
    .max(3_600_000, 'must be at most an hour')
    .default(15_000),
  /**
   * Delays between attempts of an outbound notification (docs/ARCHITECTURE.md, Telling users): after the first
   * attempt fails, wait the first entry, and so on; once the list is used up the delivery is failed.
   */
  ADCP_ORCH_SUBSCRIPTION_RETRY_SCHEDULE_MS: z
    .string()
    .default('5000,300000,1800000,7200000,18000000,36000000,50400000')
    .transform((v, ctx) => {
      const parts = v.split(',').map((p) => p.trim());
      const delays = parts.map(Number);
      if (parts.length > 0 && parts.length <= 50 && parts.every((p) => /^\d+$/.test(p)) && delays.every((d) => d > 0 && d <= 7 * 86_400_000)) return delays;
      ctx.addIssue({ code: 'custom', message: 'must be comma-separated whole milliseconds, each 1..604800000 (at most 50), e.g. 5000,300000' });
      return z.NEVER;
    }),
  /** One outbound notification attempt: longer than this counts as a failure and is retried (Standard Webhooks suggests 15–30 s). */
  ADCP_ORCH_SUBSCRIPTION_TIMEOUT_MS: z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(1, 'must be at least 1')
    .default(15_000),
  /**
   * Live media buys (README, Media buys): a reporting fire not come by the seller's
   * next_expected_at plus this long is missing (the delivery is then read from the seller).
   */
  ADCP_ORCH_REPORT_GRACE_MS: intMs(7_200_000),
  /**
   * How far ahead of our clock a delivery report's period may begin; a report of a period that
   * has not begun is refused. `serve --sandbox` raises it: the sandbox seller flies compressed
   * flights whose periods run ahead of the wall clock.
   */
  ADCP_ORCH_REPORT_CLOCK_SKEW_MS: intMs(300_000),
  /** How often a live buy's status is read from its seller (get_media_buys), jittered; at least 100 ms. */
  ADCP_ORCH_MEDIA_BUY_POLL_INTERVAL_MS: intMs(900_000).pipe(z.number().min(100, 'must be at least 100 milliseconds')),
  /**
   * Creatives of live buys (README, Creatives): how often the reviews of creatives sent to a
   * seller are looked at (list_creatives, then the buy's creative_approvals), jittered; at least 100 ms.
   */
  ADCP_ORCH_CREATIVE_POLL_INTERVAL_MS: intMs(600_000).pipe(z.number().min(100, 'must be at least 100 milliseconds')),
  /** A creative whose review has waited this long since it was sent is stalled and people are told (creative.stalled); at least 100 ms. */
  ADCP_ORCH_CREATIVE_APPROVAL_TIMEOUT_MS: intMs(172_800_000).pipe(z.number().min(100, 'must be at least 100 milliseconds')),
  /** `serve --sandbox`: the sandbox seller's "hour" for reporting fires and its compressed flights; at least 100 ms. */
  ADCP_ORCH_SANDBOX_REPORT_INTERVAL_MS: intMs(10_000).pipe(z.number().min(100, 'must be at least 100 milliseconds')),
  /**
   * Our request-signing key (README, Signed requests): a file holding an Ed25519 private key
   * (PKCS#8 PEM or a private JWK), read at start; unset, a key is made at first start and kept
   * in the database, sealed under ADCP_ORCH_SECRET_KEY. A file that cannot be read, or holds
   * anything else, stops `serve` at start (src/signing-key-file.ts).
   */
  ADCP_ORCH_SIGNING_KEY_FILE: z.string().min(1, 'must name a file').optional(),
  /**
   * How long a replaced signing key stays in our JWKS after the new one starts signing: requests
   * signed just before keep verifying at sellers that cached our keys. At least 6 minutes (a
   * signature's 5 minutes of validity plus the verifiers' 60 s of clock skew).
   */
  ADCP_ORCH_SIGNING_KEY_GRACE_MS: z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(360_000, 'must be at least 360000 (6 minutes: a signature lives 5 minutes, verifiers allow 60 s of skew)')
    .default(86_400_000),
  /**
   * How long a rotated key is published before it signs (`signing-keys rotate`), so every
   * instance has it and sellers that fetched our JWKS within their 30 s refetch cooldown see it.
   */
  ADCP_ORCH_SIGNING_KEY_LEAD_MS: intMs(60_000).pipe(z.number().max(86_400_000, 'must be at most 86400000 (a day)')),
  /** How long a dashboard sign-in lasts before the person signs in again (default 12 h). */
  ADCP_ORCH_SESSION_TTL_MS: z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .min(1_000, 'must be at least 1000 (one second)')
    .max(31 * 86_400_000, 'must be at most 31 days')
    .default(43_200_000),
});

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration:\n  ${issues.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  // Empty strings count as unset, as most shells and .env files mean them.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = ConfigSchema.safeParse({ ...cleaned, ...overrides });
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  return parsed.data;
}
