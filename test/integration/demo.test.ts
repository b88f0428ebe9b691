/**
 * `adcp-orchestrator demo` as a user runs it (a child process, nothing set up
 * beforehand): it prints live progress lines while the campaign runs, a
 * summary with the committed budget matching the governance agent's ledger,
 * then a rejected creative corrected by a person and approved by the seller,
 * then each buy's delivery reports as they come, and ends with the campaign's
 * delivered spend agreeing with the sellers' own figures and the governance
 * agent's ledger of delivery; it exits 0 in well under a minute.
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
    // One seller is spoken to in AdCP 3.0, the other in 3.1 (buy 2 goes to it).
    expect(out).toMatch(/sellers sandbox-seller-a \(AdCP 3\.0\), sandbox-seller-b \(AdCP 3\.1\)/);
    expect(out).toMatch(/buy 4 .*governance: denied \(geo_compliance\)/);
    expect(out).toMatch(/buy 2 .*the demo answers as the person/);
    expect(out).toMatch(/buy 3 .*completed \(submitted -> completed, by webhook\)/);
    expect(out).toMatch(/budget: planned 17000 USD, committed 15000 USD, plan remaining 35000 USD/);
    expect(out).toMatch(/ledger for plan_demo_launch: 15000 USD committed \(matches\)/);

    // Creatives: one approved, one rejected with the seller's reason, corrected by the person from the inbox, approved.
    const texts0 = demo.lines.map((l) => l.text);
    const order = [
      /buy 1 \(sandbox-seller-a\)  two banners sent to package \S+ \(sync_creatives operation/,
      /buy 1 .*creative cr_demo_promo "[^"]*reject[^"]*": rejected — "The landing page domain/,
      /buy 1 .*in the inbox: creative_rejected on operation \S+, a person may respond or reject/,
      /buy 1 .*the demo answers as the person \(key demo-person, role approver\): respond with a corrected cr_demo_promo .* → sync_creatives operation/,
      /buy 1 .*creative cr_demo_promo "Launch promo banner, landing page fixed": approved/,
      /buy 1 .*both creatives approved/,
    ].map((re) => texts0.findIndex((t) => re.test(t)));
    expect(order.every((i) => i >= 0), out).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(out).toMatch(/creative cr_demo_hero "Launch hero banner": approved/);
    expect(order[0]).toBeGreaterThan(texts0.findIndex((t) => /ledger for plan_demo_launch/.test(t)));

    // The buys fly: reports come in, live, after the campaign's summary and before the end.
    const texts = demo.lines.map((l) => l.text);
    const summaryIndex = texts.findIndex((t) => /ledger for plan_demo_launch/.test(t));
    const firstReport = texts.findIndex((t) => /buy \d  report #1 in: spend /.test(t));
    expect(firstReport, out).toBeGreaterThan(summaryIndex);
    expect(texts.findIndex((t) => t.includes('delivered spend'))).toBeGreaterThan(firstReport);
    for (const buy of [1, 2, 3]) expect(out).toMatch(new RegExp(`buy ${buy}  report #6 in \\(final\\): spend [\\d.]+ / [\\d.]+ USD, completed`));
    const delivered = /delivered spend, campaign \S+: (\d+\.\d\d) USD over 18 reported periods/.exec(out);
    expect(delivered, out).not.toBeNull();
    const spend = delivered![1]!;
    // Buy 1's product under-delivers: less was spent than the 15000 committed.
    expect(Number(spend)).toBeGreaterThan(10_000);
    expect(Number(spend)).toBeLessThan(15_000);
    expect(out).toContain(`the sellers' own figures (get_media_buy_delivery, lifetime): ${spend} USD (matches)`);
    expect(out).toContain(`the governance agent's ledger of delivery outcomes for plan_demo_launch: ${spend} USD over 18 periods (matches)`);
  } finally {
    await demo.stop();
  }
}, 70_000);
