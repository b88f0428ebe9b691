#!/usr/bin/env node
// Runs the compiled CLI from dist/ when a build exists that is not older than src/
// (`npm run build`; start-up is then faster), else the TypeScript sources through tsx,
// so a fresh clone works with no build step.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.build-stamp');

function newestSource(dir) {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    newest = Math.max(newest, st.isDirectory() ? newestSource(path) : st.mtimeMs);
  }
  return newest;
}

const useBuild = process.env.ADCP_ORCH_FROM_SOURCE !== '1' && existsSync(stamp) && statSync(stamp).mtimeMs >= newestSource(join(root, 'src'));
if (useBuild) {
  await import('../dist/cli/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
