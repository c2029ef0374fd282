// scripts/build: the side panel's page asks for every module of its bootstrap as it parses.
// sidepanel.html names wasm/panel.js (modulepreload); the glue's own imports, the snippets
// wasm-bindgen writes under wasm/snippets/<crate>-<hash>/, get their names only from the
// build, so their links are added here, after that one. Without them each level of imports
// waits for the one above to arrive and be read (scripts/bench-load.mjs, issue #46).
//   node scripts/lib/modulepreload.mjs <dist>
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

const dist = process.argv[2];
const page = path.join(dist, 'sidepanel.html');
const glue = 'wasm/panel.js';
const source = await readFile(path.join(dist, glue), 'utf8');
const imports = [...new Set([...source.matchAll(/^import\b[^'"]*['"](\.\/[^'"]+)['"]/gm)]
  .map((m) => path.posix.join(path.posix.dirname(glue), m[1])))];
const anchor = `<link rel="modulepreload" href="${glue}">`;
const html = await readFile(page, 'utf8');
if (!html.includes(anchor)) throw new Error(`modulepreload: ${page} has no ${anchor}`);
const indent = html.slice(html.lastIndexOf('\n', html.indexOf(anchor)) + 1, html.indexOf(anchor));
const links = imports.map((file) => `\n${indent}<link rel="modulepreload" href="${file}">`).join('');
await writeFile(page, html.replace(anchor, anchor + links));
console.log(`sidepanel.html: modulepreload for ${[glue, ...imports].join(', ')}`);
