/** `plans sync|show` and `campaigns create|show` as child processes against a governed orchestrator. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { plan } from '../helpers/governance.js';
import { governedRequest, startGoverned, type GovernedSetup } from '../helpers/governed.js';
import { eventually } from '../helpers/orchestrator.js';

let g: GovernedSetup;
let dir: string;
beforeAll(async () => {
  g = await startGoverned();
  dir = mkdtempSync(join(tmpdir(), 'cli-campaigns-'));
});
afterAll(async () => {
  await g?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('syncs a plan, starts a campaign from a file and shows it, in lines and as JSON', async () => {
  const api = ['--url', g.orch.url, '--api-key', g.orch.apiKey];
  const planFile = join(dir, 'plan.json');
  writeFileSync(planFile, JSON.stringify(plan('plan_cli', { approved_sellers: [g.sellers[0]!.url] })));
  const synced = await runCli(['plans', 'sync', '--agent', g.governanceId, '--file', planFile, ...api]);
  expect(synced.code, synced.stderr).toBe(0);
  expect(synced.stdout).toMatch(/sync_plans/);
  await eventually(async () => ((await g.orch.api('GET', '/v1/plans/plan_cli')).status === 200 ? true : undefined));
  const shown = await runCli(['plans', 'show', 'plan_cli', ...api]);
  expect(shown.stdout).toBe(`plan_cli  active  version 1  agent ${g.governanceId}\n`);

  const body = join(dir, 'campaign.json');
  writeFileSync(body, JSON.stringify({ name: 'cli', governance: { agent_id: g.governanceId, plan_id: 'plan_cli' }, buys: [{ agent_id: g.sellerIds[0], request: governedRequest() }] }));
  const created = await runCli(['campaigns', 'create', '--file', body, '--json', ...api]);
  expect(created.code, created.stderr).toBe(0);
  const id = JSON.parse(created.stdout).id as string;
  await eventually(async () => ((await g.orch.api('GET', `/v1/campaigns/${id}`)).body.status === 'done' ? true : undefined));
  const show = await runCli(['campaigns', 'show', id, ...api]);
  expect(show.code).toBe(0);
  expect(show.stdout).toMatch(new RegExp(`^${id}  done  plan plan_cli  planned 4000  committed 4000  plan remaining 6000  "cli"\\n  \\S+  done\\s+completed\\s+agent ${g.sellerIds[0]}  committed 4000\\n$`));

  const bad = await runCli(['campaigns', 'create', '--file', join(dir, 'missing.json'), ...api]);
  expect(bad.code).toBe(2);
}, 60_000);
