// scripts/size-budget.mjs, which scripts/build runs after a release build: a module over its
// budget must fail the build (and so scripts/test), and the report must name what grew.
// No browser: the checker is run as scripts/build runs it, on modules written here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './lib/browser.mjs';
import { growth, readBaseline, readBudget, baselineText, stableName } from '../../scripts/size-budget.mjs';

const checker = path.join(repoRoot, 'scripts', 'size-budget.mjs');

/** `n` bytes that gzip cannot shrink much, the same on every run (a fixed linear congruential
 *  sequence), so the gzip size is known to be near `n`. */
function incompressible(n) {
  const bytes = Buffer.alloc(n);
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    bytes[i] = x >>> 24;
  }
  return bytes;
}

/** Runs the checker on a worker module of 40 KB and a panel module of 10 KB under `budget`. */
async function check(budget) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tandem-size-'));
  try {
    await writeFile(path.join(dir, 'worker_bg.wasm'), incompressible(40 * 1024));
    await writeFile(path.join(dir, 'panel_bg.wasm'), incompressible(10 * 1024));
    await writeFile(path.join(dir, 'budget.toml'), budget);
    return await promisify(execFile)('node', [checker, '--budget', path.join(dir, 'budget.toml'), '--wasm', dir])
      .then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }), (e) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('a module over its budget fails the check, and the report says which one', async () => {
  const { code, stdout, stderr } = await check('[gzip_kb]\nworker = 20\npanel = 100\n');
  assert.equal(code, 1);
  assert.match(stdout, /worker\s+4\d\.\d KB gzip\s+budget\s+20 KB\s+\d+%\s+OVER BUDGET/);
  assert.match(stdout, /panel\s+1\d\.\d KB gzip\s+budget\s+100 KB\s+\d+%\s+ok/);
  assert.match(stderr, /over its budget/);
});

test('modules within their budgets pass, each size printed against its budget', async () => {
  const { code, stdout } = await check('[gzip_kb]\nworker = 100\npanel = 100\n');
  assert.equal(code, 0);
  assert.match(stdout, /worker\s+4\d\.\d KB gzip\s+budget\s+100 KB\s+\d+%\s+ok/);
  assert.doesNotMatch(stdout, /OVER/);
});

test('a context in the budget whose module was not built fails the check', async () => {
  const { code, stdout } = await check('[gzip_kb]\nworker = 100\npanel = 100\noptions = 100\n');
  assert.equal(code, 1);
  assert.match(stdout, /options\s+no module built/);
});

test("the committed budget covers the worker's and the panel's modules", async () => {
  const budgets = readBudget(await readFile(path.join(repoRoot, 'size-budget.toml'), 'utf8'));
  assert.deepEqual([...budgets.keys()].sort(), ['panel', 'worker']);
});

test('what grew since the baseline: crates and items by bytes grown, new items whole', () => {
  const before = [
    ['tandem_core::agent::prompt::system::h1', 5000],
    ['serde_json::de::parse::h2', 3000],
    ['data[0]', 1000],
  ];
  const baseline = readBaseline(baselineText(before));
  const now = [
    ['tandem_core::agent::prompt::system::h1', 5600],
    ['serde_json::de::parse::h2', 2900],
    ['tandem_background::mcp::connect::h3', 4000],
    ['data[0]', 1000],
  ];
  const { crates, items } = growth(now, baseline, 8);
  assert.deepEqual(crates.map(([name, delta]) => [name, delta]), [['tandem_background', 4000], ['tandem_core', 600]]);
  assert.deepEqual(items.map(([name, delta]) => [name, delta]), [
    ['tandem_background::mcp::connect::h3', 4000],
    ['tandem_core::agent::prompt::system::h1', 600],
  ]);
});

test('an item is known across builds by its name without the symbol hash', () => {
  assert.equal(stableName('tandem_core::agent::prompt::system::h0123456789abcdef'), 'tandem_core::agent::prompt::system');
  assert.equal(stableName('data segment ".rodata.123"'), 'data segment ".rodata.*"');
});
