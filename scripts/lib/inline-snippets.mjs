// scripts/build: the worker's glue carries its snippets (the JavaScript its crates declare with
// `inline_js`, which wasm-bindgen writes as modules under wasm/snippets/<crate>-<hash>/), so a
// waking worker loads two modules (background.js, the glue) instead of a level more of nine.
// Measured with scripts/bench-load.mjs, A/B alternating, medians of 11: background.js ran 8 ms
// after the worker's start against 11–12, and the reply came 4–5 ms sooner (issue #46).
// Each snippet becomes a function scope in the glue that returns its exports; the glue's
// `import … from './snippets/…'` lines become constants naming them. The snippets' own files
// are removed, unless another glue beside it imports them too. A snippet written in a form this does not know (an import of its own, `export
// default`, an export list) stops the build: it is not shipped half-rewritten.
//   node scripts/lib/inline-snippets.mjs <dist> <glue, e.g. wasm/worker.js>
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

const [dist, glue] = process.argv.slice(2);
const gluePath = path.join(dist, glue);
const source = await readFile(gluePath, 'utf8');
const IMPORT = /^import (\{[^}]*\}|\* as \w+) from ['"](\.\/snippets\/[^'"]+)['"];?\n/gm;
const imports = [...source.matchAll(IMPORT)].map((m) => ({ what: m[1], file: m[2] }));
const files = [...new Set(imports.map((i) => i.file))];

const scopes = [];
const nameOf = new Map();
for (const [k, file] of files.entries()) {
  const snippet = await readFile(path.join(path.dirname(gluePath), file), 'utf8');
  if (/^\s*import\b|^\s*export\s+(default\b|\{|\*)/m.test(snippet)) {
    throw new Error(`inline-snippets: ${file} has an import or an export form this cannot inline`);
  }
  const exported = [...snippet.matchAll(/^export\s+(?:async\s+)?(?:function\*?|const|let|class)\s+(\w+)/gm)]
    .map((m) => m[1]);
  const body = snippet.replace(/^export\s+/gm, '');
  const name = `__snippet${k}`;
  nameOf.set(file, name);
  scopes.push(`// ${file}\nconst ${name} = (() => {\n${body}\nreturn { ${exported.join(', ')} };\n})();\n`);
}
const constants = imports
  .map(({ what, file }) => `const ${what.startsWith('* as ') ? what.slice(5) : what} = ${nameOf.get(file)};\n`)
  .join('');
const rest = source.replace(IMPORT, '');
if (/^import\b/m.test(rest)) throw new Error(`inline-snippets: ${glue} still imports something`);
await writeFile(gluePath, scopes.join('') + constants + rest);
const others = [];
for (const file of await readdir(path.dirname(gluePath))) {
  if (file.endsWith('.js') && file !== path.basename(gluePath)) {
    others.push(await readFile(path.join(path.dirname(gluePath), file), 'utf8'));
  }
}
for (const dir of new Set(files.map((f) => path.dirname(f)))) {
  if (!others.some((text) => text.includes(dir))) {
    await rm(path.join(path.dirname(gluePath), dir), { recursive: true, force: true });
  }
}
console.log(`${glue}: ${files.length} snippets inlined`);
