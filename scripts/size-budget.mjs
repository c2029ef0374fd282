// The size budget of the shipped wasm (scripts/build runs it after every release build):
// prints each context's gzip size against its budget in size-budget.toml, names the crates
// and items that grew since the baseline committed in size-baseline/ (the last release's
// twiggy tables), and exits 1 when a context is over its budget, so that scripts/build and
// scripts/test fail and growth is a decision, not an accident.
//   node scripts/size-budget.mjs --budget FILE --wasm DIR [--named DIR] [--baseline DIR]
//        [--top N] [--write-baseline]
// --wasm DIR holds the shipped <context>_bg.wasm; --named DIR the same modules with their
// names kept (<context>.wasm, wasm-opt -g), which twiggy reads. --write-baseline (at a
// release) records the named modules' tables in the baseline folder instead of comparing.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const KB = 1024;

/** The budgets, in KB of gzip, from the `[gzip_kb]` table of size-budget.toml (the goals,
 *  `[goal_kb]`, are printed beside them: see readGoals). */
export function readBudget(text) {
  return readTable(text, 'gzip_kb');
}

/** The goals, in KB of gzip, from the `[goal_kb]` table (none: an empty map). */
export function readGoals(text) {
  try { return readTable(text, 'goal_kb'); } catch { return new Map(); }
}

function readTable(text, table) {
  const budgets = new Map();
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const header = line.match(/^\[([A-Za-z0-9_.-]+)\]$/);
    if (header) { section = header[1]; continue; }
    const entry = line.match(/^([A-Za-z0-9_-]+)\s*=\s*([0-9]+(?:\.[0-9]+)?)$/);
    if (!entry) throw new Error(`size-budget: cannot read the line "${raw.trim()}"`);
    if (section === table) budgets.set(entry[1], Number(entry[2]));
  }
  if (budgets.size === 0) throw new Error(`size-budget: no [${table}] table`);
  return budgets;
}

/** `gzip -9`'s size of a file, as scripts/build prints it (node's zlib compresses the same
 *  module 1% worse); node's zlib only where there is no gzip. */
export function gzipSize(file) {
  try {
    return execFileSync('gzip', ['-9c', file], { maxBuffer: 1 << 28 }).length;
  } catch {
    return gzipSync(readFileSync(file), { level: 9 }).length;
  }
}

/** twiggy's items of a named module: [name, shallow bytes], the name section left out. */
export function twiggyItems(named) {
  const csv = execFileSync('twiggy', ['top', '-n', '1000000', '-f', 'csv', named],
    { encoding: 'utf8', maxBuffer: 1 << 28 });
  const items = [];
  for (const row of csv.split('\n').slice(1)) {
    const m = row.match(/^("(?:[^"]|"")*"|[^,]*),(\d+),/);
    if (!m) continue;
    const name = m[1].replace(/^"|"$/g, '').replace(/""/g, '"');
    if (/ names" subsection$|^custom section/.test(name)) continue;
    items.push([stableName(name), Number(m[2])]);
  }
  return items;
}

/** An item's name as it stays from build to build: without the symbol's hash, and with the
 *  numbered read-only data segments as one (their numbers move with any change). */
export function stableName(name) {
  return name.replace(/::h[0-9a-f]{16}$/, '').replace(/^data segment "\.rodata\.\d+"$/, 'data segment ".rodata.*"');
}

/** The crate an item's name starts with (`<tandem_core::X as T>` counts for tandem_core;
 *  drop glue and std generics count for core/alloc, whatever they drop). */
export function crateOf(name) {
  if (name.startsWith('data segment') || /^data\[\d+\]$/.test(name)) return 'data (strings, tables, panic locations)';
  return (name.match(/^[<&]*(?:mut |dyn )?([a-z_][a-z0-9_]*)(?:\[[0-9a-f]+\])?::/) || [, 'other (glue, shims, imports)'])[1];
}

/** Bytes by crate, largest first. */
export function byCrate(items) {
  const sums = new Map();
  for (const [name, bytes] of items) sums.set(crateOf(name), (sums.get(crateOf(name)) || 0) + bytes);
  return new Map([...sums].sort((a, b) => b[1] - a[1]));
}

/** A baseline file: one `crate` or `item` line per row, tab-separated, largest first. Only
 *  the largest items are kept: the file stays small and a new big item still shows as new. */
export function baselineText(items, keepItems = 400) {
  const rows = ['# kind\tbytes\tname (twiggy, the named module of the last release; scripts/size-budget.mjs --write-baseline)'];
  for (const [crate, bytes] of byCrate(items)) rows.push(`crate\t${bytes}\t${crate}`);
  const merged = mergeItems(items);
  for (const [name, bytes] of [...merged].sort((a, b) => b[1] - a[1]).slice(0, keepItems)) rows.push(`item\t${bytes}\t${name}`);
  return rows.join('\n') + '\n';
}

export function readBaseline(text) {
  const crates = new Map();
  const items = new Map();
  for (const row of text.split('\n')) {
    if (!row || row.startsWith('#')) continue;
    const [kind, bytes, ...name] = row.split('\t');
    (kind === 'crate' ? crates : items).set(name.join('\t'), Number(bytes));
  }
  return { crates, items };
}

// Items with the same name (monomorphised copies, numbered data) count as one.
function mergeItems(items) {
  const merged = new Map();
  for (const [name, bytes] of items) merged.set(name, (merged.get(name) || 0) + bytes);
  return merged;
}

/** What grew since the baseline: crates and items by how many bytes, largest first. An item
 *  the baseline did not list counts as grown by its whole size (it is new, or newly large). */
export function growth(items, baseline, top) {
  const grew = (now, before) => [...now]
    .map(([name, bytes]) => [name, bytes - (before.get(name) || 0), bytes])
    .filter(([, delta]) => delta > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top);
  const smallest = Math.min(...baseline.items.values());
  // An item the baseline does not list and no bigger than its smallest was left out of it.
  const listed = new Map([...mergeItems(items)].filter(([name, bytes]) => baseline.items.has(name) || bytes > smallest));
  return { crates: grew(byCrate(items), baseline.crates), items: grew(listed, baseline.items) };
}

/** One report line per context, and whether every context is within its budget. */
export function checkBudgets(budgets, gzipBytes, goals = new Map()) {
  const lines = [];
  let ok = true;
  for (const [context, budgetKb] of budgets) {
    const bytes = gzipBytes.get(context);
    if (bytes === undefined) {
      lines.push(`  ${context.padEnd(8)} no module built: nothing to check against its ${budgetKb} KB budget`);
      ok = false;
      continue;
    }
    const over = bytes > budgetKb * KB;
    ok &&= !over;
    const goal = goals.get(context);
    const toGoal = goal === undefined ? '' : `   goal ≤ ${goal} KB: ${bytes <= goal * KB ? 'met' : 'NOT met'}`;
    lines.push(`  ${context.padEnd(8)} ${(bytes / KB).toFixed(1).padStart(7)} KB gzip   budget ${String(budgetKb).padStart(4)} KB   ${(100 * bytes / (budgetKb * KB)).toFixed(0).padStart(3)}%   ${over ? 'OVER BUDGET' : 'ok'}${toGoal}`);
  }
  return { lines, ok };
}

function main(argv) {
  const opts = { top: 8 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--write-baseline') opts.write = true;
    else if (['--budget', '--wasm', '--named', '--baseline', '--top'].includes(flag) && i + 1 < argv.length) opts[flag.slice(2)] = argv[++i];
    else { console.error('usage: size-budget.mjs --budget FILE --wasm DIR [--named DIR] [--baseline DIR] [--top N] [--write-baseline]'); return 2; }
  }
  if (!opts.budget || !opts.wasm) { console.error('size-budget: --budget and --wasm are needed'); return 2; }
  const budgetText = readFileSync(opts.budget, 'utf8');
  const budgets = readBudget(budgetText);
  const gzipBytes = new Map();
  for (const context of budgets.keys()) {
    const file = path.join(opts.wasm, `${context}_bg.wasm`);
    if (existsSync(file)) gzipBytes.set(context, gzipSize(file));
  }

  const { lines, ok } = checkBudgets(budgets, gzipBytes, readGoals(budgetText));
  console.log('wasm each context loads, gzip (1 KB = 1,024 bytes), against size-budget.toml:');
  for (const line of lines) console.log(line);

  if (opts.named) {
    for (const context of budgets.keys()) {
      const named = path.join(opts.named, `${context}.wasm`);
      if (!existsSync(named)) continue;
      const items = twiggyItems(named);
      const file = opts.baseline && path.join(opts.baseline, `${context}.tsv`);
      if (opts.write) {
        if (!file) { console.error('size-budget: --write-baseline needs --baseline'); return 2; }
        mkdirSync(opts.baseline, { recursive: true });
        writeFileSync(file, baselineText(items));
        console.log(`${context}: baseline written to ${file}`);
        continue;
      }
      if (!file || !existsSync(file)) { console.log(`${context}: no baseline to compare with`); continue; }
      const { crates, items: grown } = growth(items, readBaseline(readFileSync(file, 'utf8')), Number(opts.top));
      const fmt = ([name, delta, now]) => `    +${String(delta).padStart(7)} B  (now ${String(now).padStart(7)} B)  ${name}`;
      console.log(`${context}: crates that grew since the baseline (raw bytes as shipped, twiggy)${crates.length ? '' : ': none'}`);
      for (const row of crates) console.log(fmt(row));
      console.log(`${context}: items that grew since the baseline${grown.length ? '' : ': none'}`);
      for (const row of grown) console.log(fmt(row));
    }
  }
  if (!ok) {
    console.error('size-budget: a module is over its budget. Cut what grew (above), or raise its budget in size-budget.toml as a decision of its own.');
    return 1;
  }
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (error) {
    console.error(error.message);
    process.exitCode = 2;
  }
}
