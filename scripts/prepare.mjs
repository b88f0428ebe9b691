// Run by `npm install` / `npm ci` (the `prepare` script): builds dist/ so that `npm start`
// runs compiled code from the first start. Without TypeScript (an install that left out
// dev dependencies) there is nothing to build with: bin/adcp-orchestrator.js then runs the
// sources through tsx, as it does whenever dist/ is older than src/.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (!existsSync('node_modules/typescript/bin/tsc')) {
  console.log('prepare: TypeScript is not installed (dev dependencies left out); not building, the CLI runs from source');
} else {
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  // The AdCP request validators compiled once, here, and kept under node_modules/.cache: a first
  // compile takes up to a second a task, which every process would otherwise pay on first use.
  const started = Date.now();
  const { warmRequestValidators } = await import('../dist/adcp/request-schema.js');
  console.log(`prepare: ${warmRequestValidators()} AdCP request validators compiled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
