// Prints the top self-time entries of a V8 .cpuprofile (from `node --cpu-prof`):
// function, file:line and share of the sampled time, and the same summed per package/file.
//   node scripts/cpu-profile-top.mjs <file.cpuprofile> [--top 25]
import { readFileSync } from 'node:fs';

const [file, ...rest] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/cpu-profile-top.mjs <file.cpuprofile> [--top N]');
  process.exit(2);
}
const top = Number(rest[rest.indexOf('--top') + 1]) || 25;
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map();
// timeDeltas[i] is the time before sample i; attribute it to that sample's node.
for (let i = 0; i < profile.samples.length; i++) selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const where = (cf) => {
  const url = cf.url.replace(/^file:\/\//, '').replace(/.*\/node_modules\//, 'node_modules/').replace(/.*\/(src|bench)\//, '$1/');
  return url ? `${url}:${cf.lineNumber + 1}` : '';
};
const owner = (cf) => {
  if (!cf.url) return cf.functionName.startsWith('(') ? cf.functionName : '(native)';
  const m = cf.url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (m) return m[1];
  if (cf.url.startsWith('node:')) return cf.url;
  return cf.url.replace(/^file:\/\//, '').replace(/.*\/(src|bench)\//, '$1/');
};
const fns = new Map();
const owners = new Map();
for (const [id, us] of selfUs) {
  const cf = byId.get(id).callFrame;
  const key = `${cf.functionName || '(anonymous)'}  ${where(cf)}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
  owners.set(owner(cf), (owners.get(owner(cf)) ?? 0) + us);
}
const pct = (us) => `${((100 * us) / total).toFixed(1).padStart(5)} %`;
console.log(`total sampled: ${(total / 1e6).toFixed(2)} s`);
console.log('\nself time by function:');
for (const [k, us] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
console.log('\nself time by package / file:');
for (const [k, us] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${pct(us)}  ${k}`);
