/**
 * Run the sandbox seller as its own process, e.g. for crash tests where the
 * seller must outlive the orchestrator:
 *
 *   tsx src/sandbox/run-seller.ts --port 4100 --submitted-delay-ms 2000
 *
 * Flags (or environment variables):
 *   --port N                 SANDBOX_SELLER_PORT              (0 = random; default 0)
 *   --host H                 SANDBOX_SELLER_HOST              (default 127.0.0.1)
 *   --submitted-delay-ms N   SANDBOX_SELLER_SUBMITTED_DELAY_MS (default 3000)
 *   --working-delay-ms N     SANDBOX_SELLER_WORKING_DELAY_MS   (default 1500)
 *   --auth-token T           SANDBOX_SELLER_AUTH_TOKEN        (require Bearer T)
 *   --flaky-failures N       SANDBOX_SELLER_FLAKY_FAILURES    (default 2)
 *   --no-a2a                 SANDBOX_SELLER_A2A=0
 *   --governance-url U       SANDBOX_SELLER_GOVERNANCE_URL   (trust this governance agent for gov_… accounts;
 *                                                             its JWKS at <origin of U>/.well-known/jwks.json)
 *   --report-interval-ms N   SANDBOX_SELLER_REPORT_INTERVAL_MS (one flight tick per N ms; default 10000)
 *   --flight-periods N       SANDBOX_SELLER_FLIGHT_PERIODS    (most periods per flight; default 6)
 *   --status-step-ms N       SANDBOX_SELLER_STATUS_STEP_MS    (time in each pending status; default 1000)
 *   --no-report-clock        SANDBOX_SELLER_REPORT_CLOCK=0    (the flight clock starts stopped)
 *   --envelope-reports       SANDBOX_SELLER_REPORT_STYLE=envelope (3.1 envelope fires)
 *
 * The first line of standard output is a JSON object
 * {"url", "a2aUrl", "origin", "jwksUrl", "pid"} so a parent process can read
 * where to connect. The seller stops on SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { startSandboxSeller, type SandboxSellerOptions } from './seller.js';

function intOption(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    process.stderr.write(`invalid ${name}: ${raw} (expected a non-negative integer)\n`);
    process.exit(2);
  }
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'submitted-delay-ms': { type: 'string' },
      'working-delay-ms': { type: 'string' },
      'auth-token': { type: 'string' },
      'flaky-failures': { type: 'string' },
      'no-a2a': { type: 'boolean' },
      'governance-url': { type: 'string' },
      'report-interval-ms': { type: 'string' },
      'flight-periods': { type: 'string' },
      'status-step-ms': { type: 'string' },
      'no-report-clock': { type: 'boolean' },
      'envelope-reports': { type: 'boolean' },
    },
  });
  const env = process.env;
  const opts: SandboxSellerOptions = {};
  const port = intOption('port', values.port ?? env.SANDBOX_SELLER_PORT);
  if (port !== undefined) opts.port = port;
  const host = values.host ?? env.SANDBOX_SELLER_HOST;
  if (host) opts.host = host;
  const submitted = intOption('submitted-delay-ms', values['submitted-delay-ms'] ?? env.SANDBOX_SELLER_SUBMITTED_DELAY_MS);
  if (submitted !== undefined) opts.submittedDelayMs = submitted;
  const working = intOption('working-delay-ms', values['working-delay-ms'] ?? env.SANDBOX_SELLER_WORKING_DELAY_MS);
  if (working !== undefined) opts.workingDelayMs = working;
  const token = values['auth-token'] ?? env.SANDBOX_SELLER_AUTH_TOKEN;
  if (token) opts.authToken = token;
  const flaky = intOption('flaky-failures', values['flaky-failures'] ?? env.SANDBOX_SELLER_FLAKY_FAILURES);
  if (flaky !== undefined) opts.flakyFailures = flaky;
  if (values['no-a2a'] || env.SANDBOX_SELLER_A2A === '0') opts.a2a = false;
  const interval = intOption('report-interval-ms', values['report-interval-ms'] ?? env.SANDBOX_SELLER_REPORT_INTERVAL_MS);
  if (interval !== undefined) opts.reportIntervalMs = interval;
  const periods = intOption('flight-periods', values['flight-periods'] ?? env.SANDBOX_SELLER_FLIGHT_PERIODS);
  if (periods !== undefined) opts.flightPeriods = periods;
  const step = intOption('status-step-ms', values['status-step-ms'] ?? env.SANDBOX_SELLER_STATUS_STEP_MS);
  if (step !== undefined) opts.statusStepMs = step;
  if (values['no-report-clock'] || env.SANDBOX_SELLER_REPORT_CLOCK === '0') opts.reportClock = false;
  if (values['envelope-reports'] || env.SANDBOX_SELLER_REPORT_STYLE === 'envelope') opts.reportBodyStyle = 'envelope';
  const governanceUrl = values['governance-url'] ?? env.SANDBOX_SELLER_GOVERNANCE_URL;
  if (governanceUrl) {
    opts.governance = { agentUrl: governanceUrl, jwksUrl: new URL('/.well-known/jwks.json', governanceUrl).toString() };
  }

  const seller = await startSandboxSeller(opts);
  process.stdout.write(
    `${JSON.stringify({ url: seller.url, a2aUrl: seller.a2aUrl, origin: seller.origin, jwksUrl: seller.jwksUrl, pid: process.pid })}\n`,
  );
  process.stderr.write(`sandbox seller listening: MCP ${seller.url}${seller.a2aUrl ? `, A2A ${seller.a2aUrl}` : ''}\n`);

  const stop = (): void => {
    void seller.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`sandbox seller failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
