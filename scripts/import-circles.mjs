#!/usr/bin/env node
// Import circles between the module files of each Rust crate in the workspace.
//
// A module file depends on another when it names it: `use crate::a::b`, `super::x`, or a path
// such as `crate::fence::fence(…)` in code. A facade's `pub use child::Item` is not counted as
// a dependency of the facade (it only re-exports): a path through it is followed to the file
// that defines the item, so `use crate::agent::TaskContext` depends on `agent/task.rs`.
// A `use` that `mod.rs` makes for its own code counts like any other.
// Test modules (`tests.rs`, `#[cfg(test)] mod tests`) are left out: they import whatever they
// test and nothing imports them.
//
// Prints every circle (a strongly connected group of files, with one cycle through it and the
// edges inside it) and exits 1 when there is one. scripts/test runs it on every crate.
//
//   node scripts/import-circles.mjs [crate-src-dir…]     (default: every crate of the workspace)

import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const dirs = args.map((a) => path.resolve(a));
if (dirs.length === 0) {
  for (const c of readdirSync(path.join(root, 'crates'))) {
    const src = path.join(root, 'crates', c, 'src');
    if (existsSync(path.join(src, 'lib.rs'))) dirs.push(src);
    const examples = path.join(root, 'crates', c, 'examples');
    if (!existsSync(examples)) continue;
    for (const e of readdirSync(examples)) {
      if (existsSync(path.join(examples, e, 'src', 'lib.rs'))) dirs.push(path.join(examples, e, 'src'));
    }
  }
}

/** Every .rs file under `dir`, as module path (array of names) → file. */
function moduleFiles(dir) {
  const mods = new Map();
  const walk = (d, prefix) => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) { walk(p, [...prefix, name]); continue; }
      if (!name.endsWith('.rs')) continue;
      const stem = name.slice(0, -3);
      let mod;
      if (prefix.length === 0 && (stem === 'lib' || stem === 'main')) mod = [];
      else if (stem === 'mod') mod = prefix;
      else mod = [...prefix, stem];
      if (mod.at(-1) === 'tests') continue;
      mods.set(mod.join('::'), p);
    }
  };
  walk(dir, []);
  return mods;
}

/** The source without comments, string and char literals, and `#[cfg(test)]` modules. */
function code(src) {
  let out = '';
  for (let i = 0; i < src.length;) {
    const c = src[i], n = src[i + 1];
    if (c === '/' && n === '/') { while (i < src.length && src[i] !== '\n') i++; continue; }
    if (c === '/' && n === '*') {
      let depth = 0;
      do {
        if (src[i] === '/' && src[i + 1] === '*') { depth++; i += 2; }
        else if (src[i] === '*' && src[i + 1] === '/') { depth--; i += 2; }
        else i++;
      } while (depth > 0 && i < src.length);
      continue;
    }
    const raw = /^r(#*)"/.exec(src.slice(i, i + 10));
    if (raw && !/[A-Za-z0-9_]/.test(src[i - 1] ?? '')) {
      const end = '"' + raw[1];
      const j = src.indexOf(end, i + raw[0].length);
      i = j < 0 ? src.length : j + end.length;
      out += '""';
      continue;
    }
    if (c === '"') {
      i++;
      while (i < src.length && src[i] !== '"') i += src[i] === '\\' ? 2 : 1;
      i++;
      out += '""';
      continue;
    }
    if (c === "'" && (/^'\\.+?'/.test(src.slice(i, i + 12)) || src[i + 2] === "'")) {
      const j = src.indexOf("'", i + 2);
      i = j + 1;
      out += "' '";
      continue;
    }
    out += c;
    i++;
  }
  // A test module inside a file: drop `#[cfg(test)] mod x { … }` by brace matching.
  for (let m; (m = /#\[cfg\(test\)\]\s*(pub\s+)?mod\s+\w+\s*\{/.exec(out));) {
    let depth = 0, j = m.index + m[0].length - 1;
    for (; j < out.length; j++) {
      if (out[j] === '{') depth++;
      else if (out[j] === '}' && --depth === 0) break;
    }
    out = out.slice(0, m.index) + out.slice(j + 1);
  }
  return out;
}

/** Expands a use tree (`a::{b, c::{d, e as f}, self}`) into paths (arrays of segments). */
function expand(tree) {
  tree = tree.replace(/\s+/g, '');
  const out = [];
  const go = (prefix, t) => {
    const brace = t.indexOf('{');
    if (brace < 0) {
      const p = t.replace(/as\w+$/, '').split('::').filter(Boolean);
      if (p.length === 1 && p[0] === 'self') out.push(prefix);
      else out.push([...prefix, ...p]);
      return;
    }
    const head = t.slice(0, brace).split('::').filter(Boolean);
    const inner = t.slice(brace + 1, t.lastIndexOf('}'));
    let depth = 0, start = 0;
    for (let i = 0; i <= inner.length; i++) {
      const ch = inner[i];
      if (ch === '{') depth++;
      else if (ch === '}') depth--;
      else if ((ch === ',' || i === inner.length) && depth === 0) {
        const part = inner.slice(start, i);
        if (part) go([...prefix, ...head], part);
        start = i + 1;
      }
    }
  };
  go([], tree);
  return out;
}

/** A path as written in module `mod` → absolute segments (from the crate root), or null. */
function absolute(mod, segs) {
  if (segs[0] === 'crate') return segs.slice(1);
  if (segs[0] === 'self') return [...mod, ...segs.slice(1)];
  if (segs[0] === 'super') {
    let base = [...mod];
    let i = 0;
    while (segs[i] === 'super') { base = base.slice(0, -1); i++; }
    return [...base, ...segs.slice(i)];
  }
  return null;
}

function analyse(dir) {
  const mods = moduleFiles(dir);
  const parsed = new Map();
  // Per module: `pub use` re-exports (name → absolute path) and its dependency paths.
  for (const [key, file] of mods) {
    const mod = key ? key.split('::') : [];
    const text = code(readFileSync(file, 'utf8'));
    const reexports = new Map();
    const paths = [];
    const useRe = /\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);/g;
    let rest = text;
    for (let m; (m = useRe.exec(text));) {
      const isPub = Boolean(m[1]);
      for (const p of expand(m[2])) {
        // A child module named without `self::` (edition 2018 paths) is relative.
        const first = p[0];
        let abs = absolute(mod, p);
        if (!abs && mods.has([...mod, first].join('::'))) abs = [...mod, ...p];
        if (!abs) continue;
        if (isPub) {
          const name = p.at(-1) === '*' ? '*' : (m[2].includes(' as ') ? null : p.at(-1));
          if (name) reexports.set(name === '*' ? `*${abs.slice(0, -1).join('::')}` : name, abs);
          continue;
        }
        paths.push(abs);
      }
    }
    rest = text.replace(useRe, ' ');
    for (const m of rest.matchAll(/(?<![\w:])((?:crate|super|self)(?:::(?:\w+|\*))+)/g)) {
      const abs = absolute(mod, m[1].split('::'));
      if (abs) paths.push(abs);
    }
    parsed.set(key, { mod, reexports, paths });
  }

  /** The module file an absolute path lands in (following facades' re-exports). */
  const resolve = (segs, depth = 0) => {
    let cur = [];
    let i = 0;
    while (i < segs.length && mods.has([...cur, segs[i]].join('::'))) cur = [...cur, segs[i++]];
    if (i < segs.length && depth < 8) {
      const info = parsed.get(cur.join('::'));
      const target = info?.reexports.get(segs[i]);
      if (target) return resolve([...target, ...segs.slice(i + 1)], depth + 1);
    }
    return cur.join('::');
  };

  const edges = new Map();
  for (const [key, { paths }] of parsed) {
    const out = new Set();
    for (const p of paths) {
      const t = resolve(p);
      if (t !== key && mods.has(t)) out.add(t);
    }
    edges.set(key, out);
  }
  return { mods, edges };
}

/** Strongly connected groups of more than one module (Tarjan). */
function circles(edges) {
  let index = 0;
  const idx = new Map(), low = new Map(), on = new Set(), stack = [], groups = [];
  const strong = (v) => {
    idx.set(v, index); low.set(v, index); index++;
    stack.push(v); on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) { strong(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const g = [];
      let w;
      do { w = stack.pop(); on.delete(w); g.push(w); } while (w !== v);
      if (g.length > 1) groups.push(g.sort());
    }
  };
  for (const v of [...edges.keys()].sort()) if (!idx.has(v)) strong(v);
  return groups;
}

/** One cycle through `group`, starting at its first module (breadth-first back to it). */
function cycle(group, edges) {
  const inGroup = new Set(group);
  const start = group[0];
  const prev = new Map();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift();
    for (const w of edges.get(v) ?? []) {
      if (!inGroup.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = prev.get(u)) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!prev.has(w)) { prev.set(w, v); queue.push(w); }
    }
  }
  return group;
}

let found = 0;
for (const dir of dirs) {
  const { edges } = analyse(dir);
  const crate = path.relative(root, path.dirname(dir)) || dir;
  for (const g of circles(edges)) {
    found++;
    const c = cycle(g, edges).map((m) => m || 'lib');
    console.log(`import circle in ${crate} (${g.length} modules): ${c.join(' → ')}`);
    for (const v of g) console.log(`  ${v || 'lib'} uses ${[...edges.get(v)].filter((w) => g.includes(w)).map((w) => w || 'lib').join(', ')}`);
  }
}
console.log(found ? `${found} import circles: each module may use only modules below it (ARCHITECTURE.md, "Layers")` : `no import circles in ${dirs.length} crates`);
process.exit(found ? 1 : 0);
