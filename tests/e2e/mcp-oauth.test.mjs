// Signing in to remote MCP servers with OAuth 2.1 (issue 35), end to end: a REAL MCP server
// (the official SDK) that answers 401 with `WWW-Authenticate: Bearer resource_metadata=…`, a
// REAL authorization server built from the SDK's auth router and demo provider
// (lib/mcp-auth-server.mjs), the real dist/ in Chromium, whose sign-in window is
// chrome.identity.launchWebAuthFlow. Claims are checked on what the person sees, on what the
// authorization server and the MCP server received, and on what the model received.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { TANDEM_ID } from './lib/browser.mjs';
import { startMcpServer } from './lib/mcp-server.mjs';
import { startAuthServer } from './lib/mcp-auth-server.mjs';
import { fillMcpServer, mcpStatus as mcpStatusOf } from './lib/mcp-panel.mjs';
import { lastAnswer as lastAnswerOf, sendMessage, toolProviders, waitIdle } from './lib/panel.mjs';
import { panelSuite } from './lib/suites.mjs';

const KEY = 'sk-oauth-abcdefgh12345678';

let browser, mock, panel, workerConsole, panelConsole;
/** The first test's servers, which the next tests go on with. */
let tracker;
const closers = [];

panelSuite({
  mock: { delayMs: 5 },
  launch: { extensionId: TANDEM_ID },
  consoles: true,
  provider: { key: KEY, onDevice: 'cloud' },
  ready: (env) => ({ browser, mock, panel, workerConsole, panelConsole } = env),
});

after(async () => {
  for (const c of closers) await c().catch(() => {});
});

const mcpStatus = () => mcpStatusOf(panel);
const form = () => panel.getByRole('group', { name: 'New MCP server' });

/** An MCP server that signs people in, and its authorization server. */
async function signedServers({ name, tamperState = false, issuer = null, registration = true, expiresIn = 3600, wrongIss = null }) {
  const oauth = { issuer: null, accepts: () => false };
  const mcp = await startMcpServer({ name, json: true, oauth });
  closers.push(() => mcp.close());
  const auth = await startAuthServer({ resource: mcp.url, tamperState, registration, expiresIn, wrongIss });
  closers.push(() => auth.close());
  oauth.issuer = issuer ?? `${auth.url}/`;
  oauth.accepts = (token) => auth.provider.accepts(token);
  return { mcp, auth };
}

const fill = ({ name, url }) => fillMcpServer(panel, { name, url, token: null });

async function callEcho(prefix, text) {
  mock.setDefault({ reply: 'Fine.' });
  const offered = mock.waitForRequest(() => true, 10000);
  await sendMessage(panel, 'What tools?');
  const name = ((await offered).tools ?? []).find((t) => t.startsWith(`${prefix}__echo`));
  await waitIdle(panel);
  mock.reset();
  assert.ok(name, 'the signed-in server\'s tool is offered');
  mock.script({ toolCall: { name, arguments: { text } } });
  mock.setDefault({ reply: 'Echoed.' });
  const next = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 20000);
  await sendMessage(panel, `Echo ${text}.`);
  const result = (await next).toolResults[0];
  await waitIdle(panel);
  return result;
}

test('a server that answers 401 with resource_metadata gets Sign in instead of a token field; signing in adds it and its tools work, with tokens nobody sees', async () => {
  tracker = await signedServers({ name: 'Tracker' });
  const { mcp, auth } = tracker;
  await fill({ name: 'Tracker', url: mcp.url });
  await form().getByRole('button', { name: 'Test server' }).click();
  await mcpStatus().filter({ hasText: 'The MCP server signs people in with their account: use Sign in instead of a token.' }).waitFor();
  await form().getByRole('button', { name: 'Sign in' }).waitFor();
  assert.equal(await form().getByLabel('Bearer token (optional)').isVisible(), false, 'no token field for it');

  await form().getByRole('button', { name: 'Sign in' }).click();
  await mcpStatus().filter({ hasText: 'Added (signed in). Connected to «Tracker»: 3 tools' }).waitFor({ timeout: 20000 });
  const paths = auth.received.map((r) => `${r.method} ${r.path}`);
  for (const step of ['GET /.well-known/oauth-authorization-server', 'POST /register', 'GET /authorize', 'POST /token']) {
    assert.ok(paths.includes(step), `the authorization server saw ${step}: ${paths.join(', ')}`);
  }
  const client = [...auth.provider.clientsStore.clients.values()][0];
  assert.match(client.redirect_uris[0], /^https:\/\/[a-p]{32}\.chromiumapp\.org\/mcp$/, 'registered with the identity redirect');
  assert.equal(client.token_endpoint_auth_method, 'none', 'a public client: PKCE, no secret');
  const init = mcp.received.filter((m) => m.rpc === 'initialize').at(-1);
  const token = init.headers.authorization.replace('Bearer ', '');
  assert.ok(auth.provider.accepts(token), 'the MCP server got a token its authorization server issued');

  const result = await callEcho('tracker', 'signed in');
  assert.ok(result.content.includes('echo from Tracker: signed in'), result.content);

  const html = await panel.evaluate(() => document.documentElement.outerHTML + [...document.querySelectorAll('input, textarea')].map((i) => i.value).join('\n'));
  assert.ok(!html.includes(token), 'the access token is not in the panel');
  const reg = await panel.evaluate(() => chrome.storage.local.get('toolRegistry').then((x) => JSON.stringify(x.toolRegistry)));
  assert.ok(!reg.includes(token), 'nor in the registry the panel reads');
});

test('an expired access token is refreshed and the call goes on; a refresh the server refuses says Sign in again', async () => {
  const { auth, mcp } = tracker;
  auth.provider.expireAll();
  const result = await callEcho('tracker', 'after expiry');
  assert.ok(result.content.includes('echo from Tracker: after expiry'), result.content);
  assert.equal(auth.provider.refreshed, 1, 'one refresh');
  assert.ok(auth.provider.accepts(mcp.calls().at(-1).headers.authorization.replace('Bearer ', '')), 'the call carried the new token');

  auth.provider.expireAll();
  auth.provider.refreshTokens.clear(); // revoked by the server's administrator
  const refused = await callEcho('tracker', 'once more');
  assert.match(refused.content, /Sign in again/, refused.content);
  await (await toolProviders(panel)).getByLabel('Problem with Tracker').filter({ hasText: 'Sign in again' }).waitFor();
});

test('Remove server revokes the tokens at the authorization server and forgets them', async () => {
  const { auth } = tracker;
  const list = await toolProviders(panel);
  await list.getByRole('button', { name: 'Remove server Tracker' }).click();
  await list.getByRole('button', { name: 'Remove server Tracker' }).waitFor({ state: 'detached' });
  const deadline = Date.now() + 5000;
  while (!auth.received.some((r) => r.path === '/revoke') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.ok(auth.received.some((r) => r.method === 'POST' && r.path === '/revoke'), 'revoked');
  const stored = await browser.serviceWorker.evaluate(() => chrome.storage.local.get('mcpTokens').then((x) => JSON.stringify(x.mcpTokens ?? {})));
  assert.equal(stored, '{}', 'the tokens are forgotten');
  const logged = [...workerConsole.messages, ...panelConsole.messages].map((m) => m.text).join('\n');
  assert.ok(!/Bearer [0-9a-f-]{36}/.test(logged), 'no token in any console line');
});

test('a sign-in answer with the wrong state is ignored with a sentence, and no code is exchanged', async () => {
  const { mcp, auth } = await signedServers({ name: 'Tampered', tamperState: true });
  await fill({ name: 'Tampered', url: mcp.url });
  await form().getByRole('button', { name: 'Test server' }).click();
  await form().getByRole('button', { name: 'Sign in' }).click();
  await mcpStatus().filter({ hasText: 'The sign-in answer does not belong to the sign-in Tandem started (its state differs): it was ignored.' }).waitFor({ timeout: 20000 });
  assert.ok(auth.received.some((r) => r.path === '/authorize'), 'the window went to the authorization server');
  assert.ok(!auth.received.some((r) => r.path === '/token'), 'no code was exchanged');
  assert.equal(await (await toolProviders(panel)).getByRole('button', { name: 'Remove server Tampered' }).count(), 0, 'not added');
});

test('a hostile metadata document pointing the token endpoint at another host is refused with a sentence', async () => {
  // The authorization server's metadata names a token endpoint on a collector's host.
  const hostile = http.createServer((req, res) => {
    const self = `http://127.0.0.1:${hostile.address().port}`;
    if (req.url === '/.well-known/oauth-authorization-server') {
      res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' }).end(JSON.stringify({
        issuer: `${self}/`, authorization_endpoint: `${self}/authorize`, token_endpoint: 'https://collector.evil.test/token',
        registration_endpoint: `${self}/register`, response_types_supported: ['code'], code_challenge_methods_supported: ['S256'],
      }));
    } else res.writeHead(404).end();
  });
  await new Promise((r) => hostile.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => { hostile.closeAllConnections(); hostile.close(r); }));
  const { mcp } = await signedServers({ name: 'Hostile', issuer: `http://127.0.0.1:${hostile.address().port}/` });
  const collected = [];
  await browser.context.route('https://collector.evil.test/**', (route) => { collected.push(route.request().url()); route.fulfill({ status: 200, body: '{}' }); });
  await fill({ name: 'Hostile', url: mcp.url });
  await form().getByRole('button', { name: 'Test server' }).click();
  await form().getByRole('button', { name: 'Sign in' }).click();
  await mcpStatus().filter({ hasText: 'points its token_endpoint at https://collector.evil.test, another site than the server itself' }).waitFor({ timeout: 20000 });
  assert.equal(collected.length, 0, 'nothing went to the collector');
});

test('a refused refresh shows a Sign in again button that signs in and brings the tools back; Sign out revokes the tokens, shows Sign in, and the server never gets the old token again', async () => {
  const { mcp, auth } = await signedServers({ name: 'Wiki' });
  await fill({ name: 'Wiki', url: mcp.url });
  await form().getByRole('button', { name: 'Test server' }).click();
  await form().getByRole('button', { name: 'Sign in' }).click();
  await mcpStatus().filter({ hasText: 'Added (signed in). Connected to «Wiki»' }).waitFor({ timeout: 20000 });
  const list = await toolProviders(panel);
  await list.getByRole('button', { name: 'Sign out of Wiki' }).waitFor();
  assert.equal(await list.getByRole('button', { name: 'Sign in again to Wiki' }).count(), 0, 'no Sign in again while signed in');

  // The refresh token is revoked by the server's administrator: the refresh is refused.
  auth.provider.expireAll();
  auth.provider.refreshTokens.clear();
  const refused = await callEcho('wiki', 'expired');
  assert.match(refused.content, /Sign in again/, refused.content);
  const again = (await toolProviders(panel)).getByRole('button', { name: 'Sign in again to Wiki' });
  await again.waitFor();
  const windows = auth.received.filter((r) => r.path === '/authorize').length;
  await again.click();
  await again.waitFor({ state: 'detached', timeout: 20000 });
  assert.equal(auth.received.filter((r) => r.path === '/authorize').length, windows + 1, 'a new sign-in window went to the authorization server');
  const restored = await callEcho('wiki', 'back again');
  assert.ok(restored.content.includes('echo from Wiki: back again'), restored.content);
  const token = mcp.calls().at(-1).headers.authorization.replace('Bearer ', '');
  assert.ok(auth.provider.accepts(token), 'the call carried a token from the new sign-in');

  const seen = mcp.received.length;
  await (await toolProviders(panel)).getByRole('button', { name: 'Sign out of Wiki' }).click();
  await (await toolProviders(panel)).getByRole('button', { name: 'Sign in to Wiki' }).waitFor({ timeout: 10000 });
  await (await toolProviders(panel)).getByLabel('Problem with Wiki').filter({ hasText: 'Signed out' }).waitFor();
  assert.equal(await (await toolProviders(panel)).getByRole('button', { name: 'Sign out of Wiki' }).count(), 0, 'no Sign out once signed out');
  assert.ok(auth.received.some((r) => r.method === 'POST' && r.path === '/revoke'), 'the revocation reached the authorization server');
  assert.ok(auth.provider.revoked.includes(token), 'the access token was revoked');
  assert.ok(!auth.provider.accepts(token), 'the old token no longer works');
  const stored = await browser.serviceWorker.evaluate(() => chrome.storage.local.get('mcpTokens').then((x) => JSON.stringify(x.mcpTokens ?? {})));
  assert.ok(!stored.includes(token), 'the token is forgotten');

  // A later turn: its tools are not offered, and the server never gets the old token (the
  // session's DELETE, sent before the revocation, is the last request that may carry it).
  mock.reset();
  mock.setDefault({ reply: 'Fine.' });
  const offered = mock.waitForRequest(() => true, 10000);
  await sendMessage(panel, 'What tools now?');
  const offeredTools = (await offered).tools ?? [];
  assert.ok(!offeredTools.some((t) => t.startsWith('wiki__')), `its tools are no longer offered: ${offeredTools.join(', ')}`);
  await waitIdle(panel);
  const later = mcp.received.slice(seen).filter((m) => m.method !== 'DELETE');
  assert.ok(later.every((m) => !(m.headers.authorization ?? '').includes(token)), 'no request with the old token after signing out');
});

test('an authorization server without registration gets a Client ID field; the pasted id is the one the sign-in uses', async () => {
  const { mcp, auth } = await signedServers({ name: 'Ledger', registration: false });
  // The id an administrator gave out in the server's settings, for Tandem's redirect.
  auth.provider.clientsStore.clients.set('tandem-from-admin', {
    client_id: 'tandem-from-admin', redirect_uris: [`https://${TANDEM_ID}.chromiumapp.org/mcp`],
    token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
  });
  await fill({ name: 'Ledger', url: mcp.url });
  await form().getByRole('button', { name: 'Test server' }).click();
  await form().getByRole('button', { name: 'Sign in' }).click();
  await mcpStatus().filter({ hasText: 'The server does not allow registering Tandem by itself: paste a client id' }).waitFor({ timeout: 20000 });
  assert.ok(!auth.received.some((r) => r.path === '/register'), 'no registration was tried where none is offered');
  assert.ok(!auth.received.some((r) => r.path === '/authorize'), 'no sign-in window without a client id');
  await form().getByLabel('Client ID for Ledger').fill('tandem-from-admin');
  await form().getByRole('button', { name: 'Sign in' }).click();
  await mcpStatus().filter({ hasText: 'Added (signed in). Connected to «Ledger»' }).waitFor({ timeout: 20000 });
  const authorize = auth.received.find((r) => r.path === '/authorize');
  assert.equal(authorize.query.client_id, 'tandem-from-admin', 'the sign-in window used the pasted client id');
  const init = mcp.received.filter((m) => m.rpc === 'initialize').at(-1);
  const token = init.headers.authorization.replace('Bearer ', '');
  assert.equal(auth.provider.tokens.get(token)?.clientId, 'tandem-from-admin', 'the MCP server got a token issued to that client');
  assert.equal(await form().getByLabel(/^Client ID for/).isVisible(), false, 'the field is gone once added');
  await (await toolProviders(panel)).getByRole('button', { name: 'Sign out of Ledger' }).waitFor();
});

/** Adds `name` at `mcp` by signing in, and waits until it is added. */
async function signIn(name, mcp) {
  await fill({ name, url: mcp.url });
  await form().getByRole('button', { name: 'Test server' }).click();
  await form().getByRole('button', { name: 'Sign in' }).click();
  await mcpStatus().filter({ hasText: `Added (signed in). Connected to «${name}»` }).waitFor({ timeout: 20000 });
}

test('a call after the token expired renews it first: the authorization server answers a refresh grant and the MCP server never sees the expired token', async () => {
  // Tokens for 3 s (Tandem renews a token in the minute before it expires, so this one is
  // due at once); the call comes after it expired.
  const { mcp, auth } = await signedServers({ name: 'Calendar', expiresIn: 3 });
  await signIn('Calendar', mcp);
  assert.deepEqual(auth.provider.grants, ['authorization_code']);
  const first = mcp.received.filter((m) => m.rpc === 'initialize').at(-1).headers.authorization.replace('Bearer ', '');
  await new Promise((r) => setTimeout(r, 3500));
  assert.equal(auth.provider.accepts(first), false, 'the first token has expired');
  const seen = mcp.received.length;
  const result = await callEcho('calendar', 'before expiry');
  assert.ok(result.content.includes('echo from Calendar: before expiry'), result.content);
  assert.ok(auth.provider.grants.slice(1).includes('refresh_token'), `a refresh grant: ${auth.provider.grants.join(', ')}`);
  const later = mcp.received.slice(seen);
  assert.deepEqual(later.filter((m) => m.refused).map((m) => m.rpc ?? m.method), [], 'no request was refused: the token was renewed before it was used');
  const call = mcp.calls().at(-1);
  assert.notEqual(call.headers.authorization, `Bearer ${first}`, 'the call carried a renewed token');
  assert.ok(later.every((m) => m.headers.authorization !== `Bearer ${first}`), 'the expired token was never sent');
});

test('a short-lived token (40 s) is used until its last fifth: calls right after sign-in send no refresh grant', async () => {
  const { mcp, auth } = await signedServers({ name: 'Shortlived', expiresIn: 40 });
  await signIn('Shortlived', mcp);
  const seen = mcp.received.length;
  for (const word of ['one', 'two', 'three']) {
    const result = await callEcho('shortlived', word);
    assert.ok(result.content.includes(`echo from Shortlived: ${word}`), result.content);
  }
  assert.deepEqual(auth.provider.grants, ['authorization_code'], 'no call renewed a token with 30 s or more left');
  assert.equal(mcp.received.slice(seen).filter((m) => m.refused).length, 0, 'no call was refused');
});

test('the event stream outlives its token: reopened after the token expired, it is renewed first, and a tool the server adds later is offered', async () => {
  const { mcp, auth } = await signedServers({ name: 'Streams', expiresIn: 3 });
  await signIn('Streams', mcp);
  const until = async (check, what) => {
    const deadline = Date.now() + 15000;
    while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.ok(check(), what);
  };
  await until(() => mcp.openStreams() >= 1, 'the event stream is open');
  await new Promise((r) => setTimeout(r, 3500)); // the token it was opened with has expired
  const seen = mcp.received.length;
  mcp.dropStreams(); // a proxy's idle limit cuts it
  await until(() => mcp.received.slice(seen).some((m) => m.method === 'GET' && !m.refused) && mcp.openStreams() >= 1,
    `reopened with a token the server takes: ${mcp.received.slice(seen).map((m) => `${m.method} ${m.rpc ?? ''}${m.refused ? ' (401)' : ''}`).join(', ')}`);
  assert.ok(auth.provider.grants.includes('refresh_token'), `renewed: ${auth.provider.grants.join(', ')}`);
  await mcp.addTool({ name: 'late_tool', description: 'Arrived later.', annotations: { readOnlyHint: true, openWorldHint: false },
    inputSchema: { type: 'object', properties: {} } });
  await (await toolProviders(panel)).getByRole('combobox', { name: 'late_tool from Streams' }).waitFor({ timeout: 10000 });
});

test('Add server pressed before Test on a server that signs people in: its row offers Sign in, which signs in and brings its tools', async () => {
  const { mcp, auth } = await signedServers({ name: 'Straight' });
  await fill({ name: 'Straight', url: mcp.url });
  await form().getByRole('button', { name: 'Add server' }).click();
  await mcpStatus().filter({ hasText: 'Added, but not usable yet' }).waitFor({ timeout: 20000 });
  const signIn = (await toolProviders(panel)).getByRole('button', { name: 'Sign in to Straight' });
  await signIn.click();
  await signIn.waitFor({ state: 'detached', timeout: 20000 });
  assert.ok(auth.received.some((r) => r.path === '/authorize'), 'the sign-in window went to the authorization server');
  const result = await callEcho('straight', 'signed in from the row');
  assert.ok(result.content.includes('echo from Straight: signed in from the row'), result.content);
});

test('a 401 on a call renews the token once and retries: one refresh grant, one refused request, then the answer', async () => {
  const { mcp, auth } = await signedServers({ name: 'Mailbox' });
  await signIn('Mailbox', mcp);
  await callEcho('mailbox', 'warm up'); // the server is offered and its session open
  const grants = auth.provider.grants.length;
  const seen = mcp.received.length;
  auth.provider.expireAll(); // revoked by an administrator: Tandem only learns it from the 401
  const result = await callEcho('mailbox', 'after the 401');
  assert.ok(result.content.includes('echo from Mailbox: after the 401'), result.content);
  assert.deepEqual(auth.provider.grants.slice(grants), ['refresh_token'], 'exactly one refresh');
  const later = mcp.received.slice(seen);
  assert.equal(later.filter((m) => m.refused).length, 1, `one refused request: ${later.map((m) => `${m.rpc ?? m.method}${m.refused ? ' (401)' : ''}`).join(', ')}`);
  const refusedAt = later.findIndex((m) => m.refused);
  assert.ok(later.slice(refusedAt + 1).some((m) => m.rpc === 'tools/call' && !m.refused), 'the call was sent again and answered');
});

test('a sign-in answer naming another issuer (RFC 9207) is refused with a sentence, and no code is exchanged', async () => {
  const { mcp, auth } = await signedServers({ name: 'Mixup', wrongIss: 'https://auth.evil.test/' });
  await fill({ name: 'Mixup', url: mcp.url });
  await form().getByRole('button', { name: 'Test server' }).click();
  await form().getByRole('button', { name: 'Sign in' }).click();
  await mcpStatus().filter({ hasText: `The sign-in answer came from https://auth.evil.test/, not from the authorization server Tandem asked (${auth.url}/): it was ignored.` })
    .waitFor({ timeout: 20000 });
  assert.ok(auth.received.some((r) => r.path === '/authorize'), 'the window went to the authorization server');
  assert.ok(!auth.received.some((r) => r.path === '/token'), 'no code was exchanged');
  assert.deepEqual(auth.provider.grants, []);
  assert.equal(await (await toolProviders(panel)).getByRole('button', { name: 'Remove server Mixup' }).count(), 0, 'not added');
});
