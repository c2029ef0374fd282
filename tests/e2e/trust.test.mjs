// Trust boundaries, tried as an attacker would: Tandem's own content-script world on an
// ordinary page (where the DOM driver runs during a task), reached through CDP, and a second
// unpacked extension loaded beside Tandem. Neither may read the saved key, spend it, read a
// tab's conversation or drive a task; and two Start commands in one tick make one run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { routeSite } from './lib/fixtures.mjs';
import { page } from './lib/shop-site.mjs';
import { alwaysAllow, scriptedModel, taskUi, useMockProvider } from './lib/agent-harness.mjs';

const KEY = 'sk-test-trust-SECRETKEY-9876';
let browser, mock, panel, tab, site, neighbourDir, neighbour;

before(async () => {
  // The neighbour: an extension the user installed for something else, which tries
  // Tandem's panel protocol on Tandem's id.
  neighbourDir = await mkdtemp(path.join(os.tmpdir(), 'tandem-neighbour-'));
  await writeFile(path.join(neighbourDir, 'manifest.json'), JSON.stringify({
    manifest_version: 3, name: 'Neighbour', version: '1.0', background: { service_worker: 'neighbour.js' },
  }));
  await writeFile(path.join(neighbourDir, 'neighbour.js'), '// probes are evaluated by the test\n');
  mock = await startMockProvider({ delayMs: 0 });
  browser = await launchExtension({ others: [neighbourDir] });
  site = await routeSite(browser.context, { routes: { '/': page('Shop', '<h1>Shop</h1><button>Buy</button>') } });
  panel = await browser.openPanel();
  await alwaysAllow(panel, [site.host]);
  await useMockProvider(panel, mock, { key: KEY });
  tab = await browser.context.newPage();
  await tab.goto(`${site.url}/`);
  neighbour = browser.context.serviceWorkers().find((w) => w.url().endsWith('/neighbour.js'))
    ?? await browser.context.waitForEvent('serviceworker', { predicate: (w) => w.url().endsWith('/neighbour.js') });
});
after(async () => {
  await browser?.close();
  await mock?.close();
  if (neighbourDir) await rm(neighbourDir, { recursive: true, force: true });
});

/** Every shape the panel sends, aimed at a server of the sender's choosing. */
function panelMessages(mockUrl, tabId) {
  return [
    { testConnection: { requestId: 't1', provider: 'openai-compatible', settings: { baseUrl: `${mockUrl}/v1`, model: 'x', apiKey: '', contextWindow: null, projectId: '', appId: '' } } },
    { send: { requestId: 's1', messages: [{ role: 'user', text: 'spend the key' }], tabId, answerId: 'a1' } },
    { open: { requestId: 'o1', tabId } },
    { task: { command: { getState: {} } } },
    { task: { command: { start: { task: 'buy everything', tabId } } } },
  ].map((m) => JSON.stringify(m));
}

/** Runs `expression` in Tandem's content-script (isolated) world on `tab`. */
async function inContentScript(expression) {
  const tabId = await panel.evaluate((url) => chrome.tabs.query({ url }).then((t) => t[0].id), `${site.url}/*`);
  // What a task does first: inject the DOM driver, which creates Tandem's isolated world.
  await panel.evaluate((id) => chrome.scripting.executeScript({ target: { tabId: id }, files: ['content/driver.js'] }), tabId);
  const cdp = await browser.context.newCDPSession(tab);
  const contexts = [];
  cdp.on('Runtime.executionContextCreated', ({ context }) => contexts.push(context));
  await cdp.send('Runtime.enable');
  const world = contexts.find((c) => c.auxData?.type === 'isolated' && c.origin === `chrome-extension://${browser.extensionId}`);
  assert.ok(world, 'Tandem\'s isolated world is on the page');
  const { result, exceptionDetails } = await cdp.send('Runtime.evaluate', { expression, contextId: world.id, awaitPromise: true, returnByValue: true });
  await cdp.detach();
  assert.equal(exceptionDetails, undefined, JSON.stringify(exceptionDetails));
  return { value: result.value, tabId };
}

test('from Tandem\'s content-script world: storage is refused, and a Port named like the panel\'s gets nothing and spends nothing', async () => {
  const before = mock.requests.length;
  const tabId = await panel.evaluate((url) => chrome.tabs.query({ url }).then((t) => t[0].id), `${site.url}/*`);
  const messages = panelMessages(mock.url, tabId);
  const { value } = await inContentScript(`(async () => {
    let storage;
    try { storage = 'got ' + JSON.stringify(await chrome.storage.local.get(null)); } catch (e) { storage = 'refused: ' + e.message; }
    let session;
    try { session = 'got ' + JSON.stringify(await chrome.storage.session.get(null)); } catch (e) { session = 'refused: ' + e.message; }
    const port = await new Promise((resolve) => {
      const got = [];
      const p = chrome.runtime.connect({ name: 'tandem-chat' });
      p.onMessage.addListener((m) => got.push(m));
      p.onDisconnect.addListener(() => resolve({ got, disconnected: true }));
      for (const m of ${JSON.stringify(messages)}) p.postMessage(m);
      setTimeout(() => resolve({ got, disconnected: false }), 3000);
    });
    return { storage, session, port };
  })()`);
  assert.match(value.storage, /^refused: .*not allowed/i, value.storage);
  assert.match(value.session, /^refused: .*not allowed/i, value.session);
  assert.ok(!JSON.stringify(value).includes('SECRETKEY'), 'the key never reached the content script');
  assert.deepEqual(value.port.got, [], 'the Port got no answer');
  assert.equal(value.port.disconnected, true, 'the worker cut the Port');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(mock.requests.length, before, 'no provider call was made with the saved key');
  assert.equal(await taskUi(panel).stored(), undefined, 'no task was started');
});

test('a second extension beside Tandem gets nothing from sendMessage or connect with the panel\'s messages', async () => {
  const before = mock.requests.length;
  const tabId = await panel.evaluate((url) => chrome.tabs.query({ url }).then((t) => t[0].id), `${site.url}/*`);
  const result = await neighbour.evaluate(async ([id, messages]) => {
    const sent = [];
    for (const m of messages) {
      try { sent.push(await chrome.runtime.sendMessage(id, m) ?? null); } catch (e) { sent.push('error: ' + e.message); }
    }
    const port = await new Promise((resolve) => {
      const got = [];
      const p = chrome.runtime.connect(id, { name: 'tandem-chat' });
      p.onMessage.addListener((m) => got.push(m));
      p.onDisconnect.addListener(() => resolve({ got, disconnected: true }));
      for (const m of messages) { try { p.postMessage(m); } catch (_) { /* already gone */ } }
      setTimeout(() => resolve({ got, disconnected: false }), 2000);
    });
    return { sent, port };
  }, [browser.extensionId, panelMessages(mock.url, tabId)]);
  // The one door other extensions have is the tool-provider protocol: anything else is
  // refused there, with nothing of Tandem's in the answer.
  for (const answer of result.sent) {
    const refused = typeof answer === 'object' && answer?.ok === false && Object.keys(answer).sort().join() === 'error,ok';
    assert.ok(refused || /^error: /.test(String(answer)), `only a refusal: ${JSON.stringify(result.sent)}`);
  }
  assert.deepEqual(result.port.got, []);
  assert.ok(!JSON.stringify(result).includes('SECRETKEY'));
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(mock.requests.length, before, 'no provider call');
  assert.equal(await taskUi(panel).stored(), undefined, 'no task was started');
});

test('two Start task commands in the same tick: one run, the other refused with a sentence', async () => {
  mock.setDefault(scriptedModel({
    planner: () => ({ plan: '1. look', complete: true }),
    navigator: () => ({ action: 'done', success: true, answer: 'Looked.' }),
  }));
  const tabId = await panel.evaluate((url) => chrome.tabs.query({ url }).then((t) => t[0].id), `${site.url}/*`);
  const answers = await panel.evaluate((id) => new Promise((resolve) => {
    const port = chrome.runtime.connect({ name: 'tandem-chat' });
    const got = [];
    port.onMessage.addListener((m) => {
      const parsed = JSON.parse(m);
      if (parsed.taskState) got.push(parsed.taskState);
      if (got.length === 2) resolve(got);
    });
    // One tick: a double click, or two panels at once.
    port.postMessage(JSON.stringify({ task: { command: { start: { task: 'First task', tabId: id } } } }));
    port.postMessage(JSON.stringify({ task: { command: { start: { task: 'Second task', tabId: id } } } }));
  }), tabId);
  const refused = answers.filter((a) => /already running/.test(a.notice ?? ''));
  assert.equal(refused.length, 1, JSON.stringify(answers.map((a) => a.notice)));
  const ui = taskUi(panel);
  await ui.waitStatus(/^Done/);
  const stored = await ui.stored();
  assert.equal(stored.task, 'First task');
  const tasks = new Set(mock.requests.map((r) => JSON.stringify(r.body)).flatMap((b) => b.match(/Task from the user: (First|Second) task/g) ?? []));
  assert.deepEqual([...tasks], ['Task from the user: First task'], 'only one task ever reached the model');
});

test('a provider whose 401 body echoes the key: the panel shows …abcd at most, in the error line and the Debug drawer', async () => {
  // An OpenAI-compatible proxy that quotes the Authorization header back, as some do.
  const seen = [];
  const echo = http.createServer((req, res) => {
    seen.push(req.headers.authorization ?? '');
    req.resume();
    req.on('end', () => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Invalid credentials: ${req.headers.authorization} is not a key this proxy knows.`, type: 'invalid_request_error' } }));
    });
  });
  await new Promise((r) => echo.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${echo.address().port}`;
  try {
    await panel.bringToFront();
    await useMockProvider(panel, { url }, { key: KEY });
    await panel.getByRole('textbox', { name: 'Message' }).fill('hello');
    await panel.getByRole('button', { name: 'Send' }).click();
    const alert = panel.getByRole('alert');
    await alert.filter({ hasText: /./ }).waitFor();
    assert.ok(seen.some((a) => a.includes(KEY)), 'the proxy did receive (and echo) the key');
    const text = await alert.textContent();
    assert.ok(!text.includes(KEY), `the error line hides the key: ${text}`);
    assert.match(text, /…9876/);
    const everything = await panel.evaluate(() => document.body.innerText + document.body.innerHTML);
    assert.ok(!everything.includes(KEY) && !everything.includes('SECRETKEY'), 'nowhere in the panel');
  } finally {
    echo.close();
    await useMockProvider(panel, mock, { key: KEY });
  }
});
