/**
 * The demo's delivery check fails when the figures disagree: the same demo, in
 * this process, against a governance agent whose ledger of delivery holds one
 * period's spend a dollar off what we reported (as a ledger that lost or
 * misbooked an outcome would). The demo says which figure does not match and
 * returns false (the command's exit code 1); the other two still agree.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDemoStack, type DemoStack } from '../../src/cli/demo/demo-stack.js';
import { runDemo } from '../../src/cli/demo/run-demo.js';

let stack: DemoStack;
beforeAll(async () => {
  stack = await startDemoStack({ LOG_LEVEL: 'error' });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

it('ends false, naming the governance ledger, when it disagrees with our reports and the sellers', async () => {
  const deliveries = stack.governance.deliveries.bind(stack.governance);
  stack.governance.deliveries = (planId?: string) => deliveries(planId).map((r, i) => (i === 0 ? { ...r, spend: r.spend + 1 } : r));
  const lines: string[] = [];
  const ok = await runDemo(stack, { line: (t) => lines.push(t) }, 50_000);
  const out = lines.join('\n');
  expect(ok, out).toBe(false);
  const ours = /delivered spend, campaign \S+: (\d+\.\d\d) USD over 18 reported periods/.exec(out)?.[1];
  expect(ours, out).toBeDefined();
  expect(out).toContain(`the sellers' own figures (get_media_buy_delivery, lifetime): ${ours} USD (matches)`);
  expect(out).toContain(`the governance agent's ledger of delivery outcomes for plan_demo_launch: ${(Number(ours) + 1).toFixed(2)} USD over 18 periods — DOES NOT MATCH`);
}, 70_000);
