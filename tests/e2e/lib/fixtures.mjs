// A tiny static site on 127.0.0.1 for tests that drive real pages (the agent
// reads and acts on them). Pages are plain strings held in memory, so a test
// shows its whole page next to its assertions. The extension's match patterns
// without a port (http://127.0.0.1/*) cover whatever port this gets.

import http from 'node:http';

/**
 * Starts the site. `routes` maps a path to an HTML string, to
 * `{body, type?, status?, headers?}`, or to a function of the recorded request
 * `{method, path, query, headers, body}` returning either of those.
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

    let route = table.get(u.pathname);
    if (typeof route === 'function') route = await route(rec);
    if (route == null) return res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    const r = typeof route === 'string' ? { body: route } : route;
    res.writeHead(r.status ?? 200, {
      'content-type': r.type ?? 'text/html; charset=utf-8',
      // Each test changes pages freely; a cached copy would hide the change.
      'cache-control': 'no-store',
      ...r.headers,
    }).end(r.body ?? '');
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
