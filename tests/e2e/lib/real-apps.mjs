// Real open-source web applications as fixtures (installed from PyPI by scripts/lib.sh
// need_real_apps into .cache/real-apps/venv): each is seeded into a temporary folder, served by
// its own HTTP server on a free loopback port, and shown to the browser on an https name the
// manifest does not list, through `context.route` (proxyApp). A task is judged by the
// application's own database (`sql`), never by what Tandem says; `reset()` copies the seeded
// database back between tasks (`restore`).
import { spawn, execFile } from 'node:child_process';
import { access, copyFile, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './browser.mjs';

const run = promisify(execFile);
const VENV = path.join(repoRoot, '.cache', 'real-apps', 'venv');
const PYTHON = path.join(VENV, 'bin', 'python');
const APPS = path.join(repoRoot, 'tests', 'real-apps');
const CACHE = path.join(repoRoot, '.cache', 'real-apps');
/** The Django admin's signed-in session (tests/real-apps/django/library/management/commands/seed.py). */
export const DJANGO_SESSION = 'e2esession0000000000000000000001';
/** The Wagtail admin's (tests/real-apps/wagtail/cms/management/commands/seed.py). */
export const WAGTAIL_SESSION = 'e2esession0000000000000000000002';

/** Throws a sentence saying how to install the apps when the venv is missing. */
async function needVenv() {
  await access(PYTHON).catch(() => {
    throw new Error(`no real-apps venv at ${VENV}: run \`source scripts/lib.sh; need_real_apps\` (scripts/test does)`);
  });
}

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Runs SQL on a SQLite file with the venv's python; resolves to the rows as arrays. */
async function sqlite(file, query, params = []) {
  const code = 'import sqlite3,sys,json;c=sqlite3.connect(sys.argv[1]);print(json.dumps(c.execute(sys.argv[2],json.loads(sys.argv[3])).fetchall()));c.commit()';
  const { stdout } = await run(PYTHON, ['-c', code, file, query, JSON.stringify(params)]);
  return JSON.parse(stdout);
}

/**
 * Puts the seeded database `from` back into the live one `to` through SQLite's backup API:
 * tracd keeps pooled connections open, and a file copied over under them is read as a
 * corrupt database ("Internal Error"); the backup takes SQLite's locks and those connections
 * see the new content.
 */
async function restore(from, to) {
  const code = 'import sqlite3,sys;s=sqlite3.connect(sys.argv[1]);d=sqlite3.connect(sys.argv[2]);s.backup(d);d.close();s.close()';
  await run(PYTHON, ['-c', code, from, to]);
}

/** Starts `args` with the venv's python in `cwd`; resolves once `url` answers (at most 60 s). */
async function serve(args, { cwd, env, url }) {
  const child = spawn(PYTHON, args, { cwd, env: { ...process.env, ...env, PYTHONWARNINGS: 'ignore' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => { log = (log + d).slice(-4000); });
  for (const t0 = Date.now(); ;) {
    if (child.exitCode != null) throw new Error(`${args.join(' ')} exited: ${log}`);
    const up = await new Promise((resolve) => {
      http.get(url, (res) => { res.resume(); resolve(true); }).on('error', () => resolve(false));
    });
    if (up) return child;
    if (Date.now() - t0 > 60_000) {
      child.kill();
      throw new Error(`${args.join(' ')} did not answer in 60 s: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Stops a server started by `serve`. */
async function stop(child) {
  if (!child || child.exitCode != null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill();
  await gone;
}

/**
 * The Django site of tests/real-apps/django (an admin of authors and books), migrated and
 * seeded, served by `manage.py runserver` (static files included) on a free port. `origin` is
 * the https name the browser will use (trusted for CSRF).
 * Resolves to `{name, origin, upstream, db, sql(query, params), reset(), close()}`.
 */
export function startDjango({ origin = 'https://books.tandem.test' } = {}) {
  return startDjangoProject('django', origin, '/admin/login/');
}

/** The Wagtail site of tests/real-apps/wagtail (a CMS with two live pages), as startDjango. */
export function startWagtail({ origin = 'https://cms.tandem.test' } = {}) {
  return startDjangoProject('wagtail', origin, '/admin/login/');
}

/**
 * The Django project in tests/real-apps/`name`: its database migrated and seeded (`manage.py
 * seed`) once per version of the project and of the pinned requirements, kept in
 * .cache/real-apps (Wagtail's migrations take most of a minute on two busy cores), copied into
 * a temporary folder and served on a free port; `ready` is a path that answers once it is up.
 */
async function startDjangoProject(name, origin, ready) {
  await needVenv();
  const cwd = path.join(APPS, name);
  const seeded = path.join(CACHE, `${name}-${await treeHash(cwd)}.sqlite3`);
  const env = { REAL_APP_ORIGIN: origin, PYTHONDONTWRITEBYTECODE: '1' };
  const manage = (db, ...a) => run(PYTHON, ['-W', 'ignore', 'manage.py', ...a], { cwd, env: { ...process.env, ...env, REAL_APP_DB: db } });
  if (!(await exists(seeded))) {
    const fresh = `${seeded}.${process.pid}`;
    await rm(fresh, { force: true });
    await manage(fresh, 'migrate', '-v0');
    await manage(fresh, 'seed');
    await rename(fresh, seeded);
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), `tandem-${name}-`));
  const db = path.join(dir, 'db.sqlite3');
  await copyFile(seeded, db);
  const port = await freePort();
  const upstream = `http://127.0.0.1:${port}`;
  let child;
  try {
    child = await serve(['-W', 'ignore', 'manage.py', 'runserver', '--noreload', '--insecure', '--skip-checks', `127.0.0.1:${port}`],
      { cwd, env: { ...env, REAL_APP_DB: db, REAL_APP_MEDIA: path.join(dir, 'media') }, url: `${upstream}${ready}` });
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    name, origin, upstream, db,
    sql: (q, p) => sqlite(db, q, p),
    reset: () => restore(seeded, db),
    async close() {
      await stop(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A short hash of every file under `dir` and of the pinned requirements. */
async function treeHash(dir) {
  const hash = createHash('sha256');
  const files = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile() && !e.parentPath.includes('__pycache__'))
    .map((e) => path.join(e.parentPath, e.name)).sort();
  for (const f of [...files, path.join(APPS, 'requirements.txt')]) hash.update(f).update(await readFile(f));
  return hash.digest('hex').slice(0, 16);
}

const exists = (f) => access(f).then(() => true, () => false);

/**
 * A Trac project (tests/real-apps/trac/seed.py) in a temporary folder, served by tracd on a
 * free port at its root. Resolves like startDjango.
 */
export async function startTrac({ origin = 'https://tracker.tandem.test' } = {}) {
  await needVenv();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tandem-trac-'));
  const project = path.join(dir, 'orbit');
  await run(PYTHON, ['-W', 'ignore', path.join(APPS, 'trac', 'seed.py'), project]);
  const db = path.join(project, 'db', 'trac.db');
  const seeded = path.join(dir, 'seeded.db');
  await copyFile(db, seeded);
  const port = await freePort();
  const upstream = `http://127.0.0.1:${port}`;
  const tracd = path.join(VENV, 'bin', 'tracd');
  let child;
  try {
    child = await serve(['-W', 'ignore', tracd, '--hostname=127.0.0.1', `--port=${port}`, '--single-env', '--base-path=/', project],
      { cwd: dir, env: {}, url: `${upstream}/wiki` });
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    name: 'trac', origin, upstream, db,
    sql: (q, p) => sqlite(db, q, p),
    reset: () => restore(seeded, db),
    async close() {
      await stop(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One HTTP exchange with the upstream server: resolves to `{status, headers, body}`. */
function exchange(url, { method, headers, body }) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** `cookie` header text with the cookies `setCookies` (Set-Cookie lines) set or cleared. */
function withCookies(cookie, setCookies) {
  const jar = new Map((cookie ?? '').split(/;\s*/).filter(Boolean).map((c) => [c.split('=')[0], c]));
  for (const line of setCookies) {
    const pair = line.split(';')[0];
    const name = pair.split('=')[0];
    if (/max-age=0|expires=thu, 01 jan 1970/i.test(line)) jar.delete(name);
    else jar.set(name, pair);
  }
  return [...jar.values()].join('; ');
}

/**
 * Shows `app` (its `upstream` loopback server) to the browser `context` at `app.origin`:
 * every request there (page loads, form posts with their bodies, fetches, cookies) is sent to
 * the upstream server with the https name as its Host and `X-Forwarded-Proto: https`, and its
 * answer is given back. A redirect of a page load is followed here, carrying the cookies it
 * set, and the page it leads to is served with the address moved there by
 * history.replaceState (Chromium's interception cannot fulfil a page load's redirect: see
 * routeSite in fixtures.mjs). Resolves to `{close()}`.
 */
export async function proxyApp(context, app) {
  const host = new URL(app.origin).host;
  const pattern = `${app.origin}/**`;
  const handler = async (route) => {
    const request = route.request();
    const u = new URL(request.url());
    const headers = { ...(await request.allHeaders()), host, 'x-forwarded-proto': 'https' };
    for (const h of Object.keys(headers)) if (h.startsWith(':')) delete headers[h];
    delete headers['accept-encoding'];
    let r = await exchange(`${app.upstream}${u.pathname}${u.search}`, { method: request.method(), headers, body: request.postDataBuffer() ?? undefined });
    const setCookies = [...(r.headers['set-cookie'] ?? [])];
    let moved = null;
    for (let hops = 0; request.isNavigationRequest() && r.status >= 300 && r.status < 400 && r.headers.location && hops < 5; hops++) {
      const target = new URL(r.headers.location, request.url());
      moved = target;
      const follow = { ...headers, cookie: withCookies(headers.cookie, setCookies) };
      delete follow['content-type'];
      delete follow['content-length'];
      delete follow.origin;
      r = await exchange(`${app.upstream}${target.pathname}${target.search}`, { method: 'GET', headers: follow });
      setCookies.push(...(r.headers['set-cookie'] ?? []));
    }
    const out = {};
    for (const [k, v] of Object.entries(r.headers)) {
      if (['set-cookie', 'content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(k)) continue;
      out[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    if (setCookies.length) out['set-cookie'] = setCookies.join('\n');
    let body = r.body;
    if (moved && /text\/html/.test(out['content-type'] ?? '')) {
      const move = `<script>history.replaceState(null, '', ${JSON.stringify(moved.pathname + moved.search)});</script>`;
      body = Buffer.from(body.toString('utf8').replace(/<head[^>]*>/i, (h) => h + move));
    }
    await route.fulfill({ status: r.status, headers: out, body });
  };
  await context.route(pattern, handler);
  return { async close() { await context.unroute(pattern, handler).catch(() => {}); } };
}
