/**
 * `adcp-orchestrator demo` as a user runs it (a child process, nothing set up
 * beforehand): it prints live progress lines while the campaign runs, a final
 * summary with the committed budget matching the governance agent's ledger,
 * and exits 0 in well under a minute.
 */
import { expect, it } from 'vitest';
import { spawnCli } from '../helpers/cli-process.js';

it('runs a governed campaign to its end and exits 0 within a minute', async () => {
  const started = Date.now();
  const demo = spawnCli(['demo'], { LOG_LEVEL: 'error' });
  try {
    // Live: the first buy's progress is printed before the campaign is over.
    const first = await demo.waitForLine((l) => /buy 1 .* created/.test(l), 50_000);
    const { code, at } = await demo.exited;
    const out = demo.lines.map((l) => l.text).join('\n');
    expect(code, `${out}\n${demo.stderr()}`).toBe(0);
    expect(at - started).toBeLessThan(60_000);
    expect(first.at).toBeLessThan(demo.lines.find((l) => /campaign .* done:/.test(l.text))!.at);
    expect(out).toMatch(/buy 4 .*governance: denied \(geo_compliance\)/);
    expect(out).toMatch(/buy 2 .*the demo answers as the person/);
    expect(out).toMatch(/buy 3 .*completed \(submitted -> completed, by webhook\)/);
    expect(out).toMatch(/budget: planned 17000 USD, committed 15000 USD, plan remaining 35000 USD/);
    expect(out).toMatch(/ledger for plan_demo_launch: 15000 USD committed \(matches\)/);
  } finally {
    await demo.stop();
  }
}, 70_000);
