/**
 * Writes src/adcp/sdk-tables.generated.json: the few facts the orchestrator needs
 * from @adcp/sdk's spec-derived tables (which tasks need an idempotency_key, which
 * take a push_notification_config, each standard error code's recovery).
 *
 * Why a generated file: importing the SDK's root module costs seconds of start-up
 * (it builds every schema), and these tables change only when the pinned SDK does.
 * test/unit/adcp/sdk-tables.test.ts fails when the file and the installed SDK disagree,
 * so an SDK upgrade cannot leave it stale: rerun `npx tsx scripts/generate-sdk-tables.ts`.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildSdkTables } from './sdk-tables.js';

const out = fileURLToPath(new URL('../src/adcp/sdk-tables.generated.json', import.meta.url));
writeFileSync(out, `${JSON.stringify(await buildSdkTables(), null, 2)}\n`);
console.log(`wrote ${out}`);
