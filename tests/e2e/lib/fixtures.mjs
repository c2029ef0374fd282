// Fixture sites for tests that drive real pages (the agent reads and acts on them). Pages are
// plain strings held in memory, so a test shows its whole page next to its assertions.
//
// Agent fixtures are served on https origins the manifest does not list (routeSite): Tandem
// gets no more access to them than to any site a user visits. startSite, a real server on
// 127.0.0.1, is for what needs a real socket (chat, memory): the manifest lists 127.0.0.1 for
// Ollama, so a page there proves nothing about access to ordinary sites.

import http from 'node:http';

/** A route's HTML page: `title` and `body` in a minimal English document. */
export const page = (title, body) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;
/** A route's plain-text answer. */
export const text = (body) => ({ type: 'text/plain', body });

/**
 * Serves `routes` at an https `origin` inside the browser `context` through
 * `context.route`: page loads, form posts, redirects and fetches from the page, the
 * extension's worker and its pages all reach it; nothing listens on a socket. `routes` maps
 * a path to an HTML string, to `{body, type?, status?, headers?}`, or to a function of the
 * recorded request `{method, path, query, headers, body}` returning either of those.
 * Resolves to `{url, host, requests, setRoute(path, value), close()}`.
 */
export async function routeSite(context, { origin = 'https://shop.tandem.test', routes = {} } = {}) {
  const table = new Map(Object.entries(routes));
  const requests = [];
  const pattern = `${origin}/**`;
  const handler = async (route) => {
    const request = route.request();
    const u = new URL(request.url());
    const rec = {
      method: request.method(),
      path: u.pathname,
      query: Object.fromEntries(u.searchParams),
      headers: await request.allHeaders(),
      body: request.postData() ?? '',
    };
    requests.push(rec);
    let r = await answer(table, rec);
    const location = r.headers.location ?? r.headers.Location;
    if (r.status >= 300 && r.status < 400 && location && request.isNavigationRequest()) {
      // Chromium's request interception cannot fulfil a redirect of a page load (measured on
      // Chromium 156: a 303 after a POST commits an error page for a second before the
      // target loads; a 302 on a GET escapes interception and goes to the network). So the
      // browser's follow-up GET is made here, recorded like any request, and its page is
      // served with the address bar moved to the target by history.replaceState, which
      // Chrome's tabs API reports as the tab's URL like a real redirect.
      const target = new URL(location, request.url());
      const follow = { method: 'GET', path: target.pathname, query: Object.fromEntries(target.searchParams), headers: rec.headers, body: '' };
      requests.push(follow);
      r = await answer(table, follow);
      const move = `<script>history.replaceState(null, '', ${JSON.stringify(target.pathname + target.search)});</script>`;
      r = { ...r, body: String(r.body).replace(/<head>/i, (h) => h + move) };
    }
    await route.fulfill({ status: r.status, headers: r.headers, body: r.body });
  };
  await context.route(pattern, handler);
  return {
    url: origin,
    host: new URL(origin).host,
    requests,
    setRoute(path, value) { table.set(path, value); },
    async close() { await context.unroute(pattern, handler).catch(() => {}); },
  };
}

/**
 * Starts a real HTTP server on 127.0.0.1 serving `routes` (as for routeSite).
 * Resolves to `{url, port, requests, setRoute(path, value), close()}`.
 */
export async function startSite({ routes = {}, port = 0 } = {}) {
  const table = new Map(Object.entries(routes));
  const requests = [];
  const sockets = new Set();

  const server = http.createServer(async (req, res) => {
    const u = new URL(req.url, 'http://site');
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const rec = { method: req.method, path: u.pathname, query: Object.fromEntries(u.searchParams), headers: { ...req.headers }, body: Buffer.concat(chunks).toString('utf8') };
    requests.push(rec);
    const r = await answer(table, rec);
    res.writeHead(r.status, r.headers).end(r.body);
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  const actualPort = server.address().port;

  return {
    url: `http://127.0.0.1:${actualPort}`,
    port: actualPort,
    requests,
    setRoute(path, value) { table.set(path, value); },
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

/** The response for `rec` from a route table: `{status, headers, body}`. */
async function answer(table, rec) {
  let route = table.get(rec.path);
  if (typeof route === 'function') route = await route(rec);
  if (route == null) return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found' };
  const r = typeof route === 'string' ? { body: route } : route;
  return {
    status: r.status ?? 200,
    headers: {
      'content-type': r.type ?? 'text/html; charset=utf-8',
      // Each test changes pages freely; a cached copy would hide the change.
      'cache-control': 'no-store',
      ...r.headers,
    },
    body: r.body ?? '',
  };
}
