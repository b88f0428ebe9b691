/**
 * `adcp-orchestrator demo` (and `npm run demo`): a whole governed campaign
 * against the sandbox agents, in this process, on a throw-away database,
 * printing live progress and a final summary, then the buys' delivery reports
 * as they come. Exit code 0 when the campaign ended as scripted, the governance
 * agent's ledger matches what was committed, and the delivered spend we hold
 * agrees with the sellers' own figures and the governance agent's ledger of
 * delivery; 1 otherwise.
 */
import type { Command } from 'commander';
import { exitAfterFlush } from '../cli-errors.js';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('run a governed campaign across two sandbox sellers (one buy denied, one needing a person, one completed by webhook), then watch its buys deliver')
    .option('--timeout <seconds>', 'give up after this long', '50')
    .action(async (opts: { timeout: string }) => {
      const { startDemoStack } = await import('../demo/demo-stack.js');
      const { runDemo } = await import('../demo/run-demo.js');
      const out = { line: (text: string) => process.stdout.write(`${text}\n`) };
      out.line('adcp-orchestrator demo: governance before every spend, against sandbox agents on loopback');
      const stack = await startDemoStack();
      let ok = false;
      try {
        ok = await runDemo(stack, out, Math.max(5, Number(opts.timeout) || 50) * 1000);
      } finally {
        await stack.close();
      }
      out.line(ok ? 'demo finished: every spend was checked first, every outcome reported, and the delivered spend agrees three ways' : 'demo did not finish as expected');
      await exitAfterFlush(ok ? 0 : 1);
    });
}
