/**
 * Configuration from the environment (DESIGN.md §7), validated once at start.
 * A bad value stops the process with a message naming the variable.
 */
import { z } from 'zod';

const intMs = (def: number) =>
  z.coerce
    .number({ message: 'must be a number of milliseconds' })
    .int('must be a whole number of milliseconds')
    .nonnegative('must not be negative')
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
  /** Tasks asked of a seller per list_tasks page while reconciling (the spec allows 1–100). */
  ADCP_ORCH_RECONCILE_PAGE_SIZE: z.coerce.number().int().min(1).max(100).default(100),
  /** How long a `working` reply is left alone before polling starts (PROTOCOL.md §6: ~5 min). */
  ADCP_ORCH_WORKING_TIMEOUT_MS: intMs(300_000),
  /** Longest wait for one call to an agent before the send counts as ambiguous. */
  ADCP_ORCH_CALL_TIMEOUT_MS: intMs(30_000),
  /** How long POST /v1/operations waits for the first reply before answering 202 anyway. */
  ADCP_ORCH_SYNC_WAIT_MS: intMs(10_000),
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
  /** A person is reminded when input-required has waited this long. */
  ADCP_ORCH_INPUT_REMINDER_MS: intMs(300_000),
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
