// A real Node workload, run as ward's confined agent under the default
// policy: it must all work. One JSON line per check, then a summary.
import { execFileSync, spawn } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import dns from 'node:dns/promises';
import crypto from 'node:crypto';

const results = [];
async function check(name, fn) {
  try {
    const detail = await fn();
    results.push({ name, ok: true, detail: String(detail ?? '') });
  } catch (e) {
    results.push({ name, ok: false, detail: String(e && e.message || e) });
  }
}
const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { encoding: 'utf8', ...opts }).trim();
const ws = process.cwd();

await check('node 22', () => { if (!process.version.startsWith('v22.')) throw new Error(process.version); return process.version; });
await check('bash child process', () => { const o = sh('bash', ['-c', 'echo hi from $0']); if (o !== 'hi from bash') throw new Error(o); return o; });
await check('spawn with pipes', () => new Promise((res, rej) => {
  const c = spawn('cat', [], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  c.stdout.on('data', d => out += d);
  c.on('close', code => code === 0 && out === 'ping' ? res(out) : rej(new Error(`${code} ${out}`)));
  c.stdin.end('ping');
}));
await check('git commit in the workspace', () => {
  fs.writeFileSync(path.join(ws, 'README.md'), '# sandboxed\n');
  sh('git', ['init', '-q', '-b', 'main']);
  sh('git', ['add', 'README.md']);
  sh('git', ['-c', 'user.name=ward', '-c', 'user.email=ward@example.invalid', 'commit', '-q', '-m', 'first']);
  fs.mkdirSync(path.join(ws, 'lib'), { recursive: true });
  sh('git', ['mv', 'README.md', 'lib/README.md']);
  sh('git', ['-c', 'user.name=ward', '-c', 'user.email=ward@example.invalid', 'commit', '-q', '-m', 'move']);
  return sh('git', ['log', '--oneline']).split('\n').length + ' commits';
});
await check('file write, rename, truncate', () => {
  const f = path.join(ws, 'a.txt');
  fs.writeFileSync(f, 'hello');
  fs.renameSync(f, path.join(ws, 'lib', 'b.txt'));
  fs.truncateSync(path.join(ws, 'lib', 'b.txt'), 2);
  return fs.readFileSync(path.join(ws, 'lib', 'b.txt'), 'utf8');
});
await check('TMPDIR writable', () => { const d = fs.mkdtempSync(path.join(os.tmpdir(), 'w-')); fs.writeFileSync(path.join(d, 'x'), 'x'.repeat(1 << 20)); return d; });
await check('os.networkInterfaces (netlink route)', () => Object.keys(os.networkInterfaces()).join(','));
await check('worker thread (clone3 falls back to clone)', () => new Promise((res, rej) => {
  const w = new Worker('const { parentPort } = require("node:worker_threads"); parentPort.postMessage(6 * 7);', { eval: true });
  w.on('message', m => { w.terminate(); m === 42 ? res(m) : rej(new Error(String(m))); });
  w.on('error', rej);
}));
await check('fs.watch (inotify)', () => new Promise((res, rej) => {
  const w = fs.watch(ws, (ev, name) => { if (name === 'watched') { w.close(); res(ev); } });
  setTimeout(() => fs.writeFileSync(path.join(ws, 'watched'), 'x'), 50);
  setTimeout(() => { w.close(); rej(new Error('no event')); }, 5000);
}));
await check('crypto and libuv threadpool', () => new Promise((res, rej) => crypto.pbkdf2('pw', 'salt', 1000, 32, 'sha256', (e, k) => e ? rej(e) : res(k.length))));
await check('dns.lookup(localhost)', async () => (await dns.lookup('localhost')).address);
await check('process.memoryUsage (/proc)', () => process.memoryUsage().rss);
const npmCli = process.env.WARD_TEST_NPM_CLI;
if (npmCli) await check('npm --version', () => sh(process.execPath, [npmCli, '--version']));
else results.push({ name: 'npm --version', ok: null, detail: 'SKIP: no npm on this machine' });
await check('no way out: write outside the rules', () => {
  try { fs.writeFileSync('/etc/ward-escape-test', 'x'); } catch (e) { if (e.code === 'EACCES') return 'EACCES'; throw e; }
  throw new Error('write succeeded');
});

for (const r of results) console.log(JSON.stringify(r));
const failed = results.filter(r => r.ok === false).length;
console.log(JSON.stringify({ summary: true, passed: results.filter(r => r.ok).length, failed }));
process.exit(failed ? 1 : 0);
