// scripts/build: writes the worker module's content hash into dist/background.js, which keys
// its copy in CacheStorage by it (extension/background.js): a rebuilt module gets a key of its
// own, so a worker never compiles a copy older than its glue, even when the manifest's version
// did not change (an unpacked extension reloaded after a build). The placeholder must be there
// exactly once: a bootstrap that lost it would stop the build, not ship without its cache.
//   node scripts/lib/stamp-module.mjs <dist>
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

const PLACEHOLDER = '@@WORKER_MODULE_HASH@@';
const [dist] = process.argv.slice(2);
const bootstrap = path.join(dist, 'background.js');
const source = await readFile(bootstrap, 'utf8');
if (source.split(PLACEHOLDER).length !== 2) {
  throw new Error(`stamp-module: ${bootstrap} must hold ${PLACEHOLDER} exactly once`);
}
const hash = createHash('sha256')
  .update(await readFile(path.join(dist, 'wasm', 'worker_bg.wasm')))
  .digest('hex')
  .slice(0, 16);
await writeFile(bootstrap, source.replace(PLACEHOLDER, hash));
