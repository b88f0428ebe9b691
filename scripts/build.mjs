// Compiles src/ to dist/ and copies the data files next to the code that reads them.
// Then stamps the build, so bin/adcp-orchestrator.js knows it is not older than src/.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
const copy = (dir) => {
  for (const name of readdirSync(dir)) {
    const from = join(dir, name);
    if (statSync(from).isDirectory()) copy(from);
    else if (!name.endsWith('.ts')) cpSync(from, join('dist', from.slice('src/'.length)));
  }
};
copy('src');
writeFileSync('dist/.build-stamp', new Date().toISOString());
console.log('built dist/');
