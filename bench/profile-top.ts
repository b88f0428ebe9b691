/**
 * Prints the top self-time entries of a .cpuprofile (from `node --cpu-prof` or a
 * bench's --profile option) as a Markdown table.
 *
 *   npx tsx bench/profile-top.ts FILE.cpuprofile [--top 15]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from './lib/common.js';
import { topSelf, topSelfTable, type CpuProfile } from './lib/cpu-profile.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '15' } } });
if (positionals.length === 0) {
  process.stderr.write('usage: npx tsx bench/profile-top.ts FILE.cpuprofile [--top 15]\n');
  process.exit(2);
}
for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  process.stdout.write(`\n${file}\n\n${topSelfTable(topSelf(profile, Number(values.top), REPO_ROOT))}\n`);
}
