// The example tool provider (dist-tools/tabs, built by scripts/build on the SDK in
// crates/tool-provider) in the real browser, without Tandem: a throwaway "fake orchestrator"
// extension carries Tandem's manifest `key`, so it has Tandem's id and is the one the provider
// talks to. Its worker records every message and answers REGISTER_TOOLS as the test says
// (ok, waiting for approval, or not at all); the test has it send TOOL_EXECUTE and
// ORCHESTRATOR_READY. A third extension, a stranger, tries the same messages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { collectConsole, launchExtension, repoRoot } from './lib/browser.mjs';

const TANDEM_ID = 'bkkhgefimkkanagkjaoehnjcmpolnojf';
const PROVIDER_DIR = path.join(repoRoot, 'dist-tools', 'tabs');
const SITE = 'https://tools.tandem.test';
const TOOLS = ['tab.list', 'tab.open', 'tab.close', 'tab.group'];

// The fake orchestrator's worker. `mode` says how REGISTER_TOOLS is answered: 'ok',
// 'pending' (Tandem's answer while the user has not approved the provider) or 'silent' (no
// answer: the sender sees an error, as when Tandem's worker has no listener).
const ORCHESTRATOR_JS = `
globalThis.received = [];
globalThis.mode = 'ok';
chrome.runtime.onMessageExternal.addListener((message, sender, sendResponse) => {
  received.push({ message, from: sender.id, at: Date.now() });
  if (message?.type === 'REGISTER_TOOLS') {
    if (mode === 'silent') return false;
    sendResponse(mode === 'pending'
      ? { ok: false, error: "Tandem Tabs is waiting for the user's approval in Tandem's panel." }
      : { ok: true, registered: message.tools.map((t) => t.name) });
  } else if (message?.type === 'UNREGISTER_TOOLS') {
    sendResponse({ ok: true, unregistered: [] });
  }
  return false;
});
`;

let browser, orchestrator, stranger, providerId, orchestratorDir, strangerDir, providerConsole;

before(async () => {
  await access(path.join(PROVIDER_DIR, 'manifest.json')).catch(() => {
    throw new Error(`no ${PROVIDER_DIR}/manifest.json: run scripts/build first`);
  });
  const { key } = JSON.parse(await readFile(path.join(repoRoot, 'manifest.json'), 'utf8'));
  orchestratorDir = await mkdtemp(path.join(os.tmpdir(), 'tandem-fake-orchestrator-'));
  await writeFile(path.join(orchestratorDir, 'manifest.json'), JSON.stringify({
    manifest_version: 3, name: 'Fake Tandem', version: '1.0', key,
    background: { service_worker: 'background.js' },
  }));
  await writeFile(path.join(orchestratorDir, 'background.js'), ORCHESTRATOR_JS);
  await writeFile(path.join(orchestratorDir, 'page.html'), '<!doctype html><title>Fake Tandem</title>');
  strangerDir = await mkdtemp(path.join(os.tmpdir(), 'tandem-stranger-'));
  await writeFile(path.join(strangerDir, 'manifest.json'), JSON.stringify({
    manifest_version: 3, name: 'Stranger', version: '1.0', background: { service_worker: 'stranger.js' },
  }));
  await writeFile(path.join(strangerDir, 'stranger.js'), '// its messages are sent by the test\n');

  browser = await launchExtension({ dist: orchestratorDir, extensionId: TANDEM_ID, others: [PROVIDER_DIR, strangerDir] });
  assert.equal(browser.extensionId, TANDEM_ID, 'the fake orchestrator has Tandem\'s id');
  orchestrator = browser.serviceWorker;
  const { context } = browser;
  const find = (pred) => context.serviceWorkers().find(pred) ?? context.waitForEvent('serviceworker', { predicate: pred });
  const provider = await find((w) => w.url().endsWith('/background.js') && !w.url().startsWith(`chrome-extension://${TANDEM_ID}/`));
  providerId = new URL(provider.url()).host;
  providerConsole = collectConsole(provider);
  stranger = await find((w) => w.url().endsWith('/stranger.js'));
  await context.route(`${SITE}/**`, (route) => route.fulfill({
    status: 200, contentType: 'text/html', body: `<!doctype html><title>Tool page ${new URL(route.request().url()).pathname}</title><h1>hi</h1>`,
  }));
});

after(async () => {
  await browser?.close();
  for (const dir of [orchestratorDir, strangerDir]) if (dir) await rm(dir, { recursive: true, force: true });
});

async function until(what, cond, ms = 5000) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await cond();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The provider's REGISTER_TOOLS messages the fake orchestrator received, oldest first. */
const registrations = () => orchestrator.evaluate((id) =>
  received.filter((r) => r.from === id && r.message?.type === 'REGISTER_TOOLS'), providerId);
const setMode = (mode) => orchestrator.evaluate((m) => { globalThis.mode = m; }, mode);
/** Sends `message` to the provider from `from` (a worker) and resolves with the answer. */
const send = (from, message) => from.evaluate(([id, m]) => chrome.runtime.sendMessage(id, m), [providerId, message]);
let calls = 0;
const execute = (toolName, params, from = orchestrator) =>
  send(from, { type: 'TOOL_EXECUTE', toolName, params, toolCallId: `call-${++calls}` });
const tabWith = (url) => browser.context.pages().find((p) => p.url() === url);

test('the provider registers its four tools with Tandem\'s id when it starts', async () => {
  const [first] = await until('a REGISTER_TOOLS', async () => (await registrations()).length && registrations());
  const tools = first.message.tools;
  assert.deepEqual(tools.map((t) => t.name), TOOLS);
  for (const t of tools) {
    assert.ok(t.label && t.description, `${t.name} has a label and a description`);
    assert.equal(t.parameters.type, 'object');
  }
  const [list, open, close, group] = tools;
  assert.deepEqual(list.annotations, { readOnlyHint: true, openWorldHint: false });
  assert.deepEqual(close.annotations, { destructiveHint: true });
  assert.deepEqual(open.parameters.required, ['url']);
  assert.equal(open.parameters.properties.url.type, 'string');
  assert.equal(close.parameters.properties.tabId.type, 'integer');
  assert.deepEqual(group.parameters.required, ['tabIds', 'title']);
  assert.equal(group.parameters.properties.tabIds.items.type, 'integer');
});

test('ORCHESTRATOR_READY makes it register again', async () => {
  const before = (await registrations()).length;
  assert.deepEqual(await send(orchestrator, { type: 'ORCHESTRATOR_READY' }), { ok: true });
  await until('a second REGISTER_TOOLS', async () => (await registrations()).length === before + 1);
});

test('an ok:false answer (waiting for approval) stops the retries until ORCHESTRATOR_READY', async () => {
  await setMode('pending');
  const before = (await registrations()).length;
  await send(orchestrator, { type: 'ORCHESTRATOR_READY' });
  await until('the registration', async () => (await registrations()).length === before + 1);
  // Retries would have come at +250 ms, +750 ms and +1750 ms.
  await sleep(2000);
  assert.equal((await registrations()).length, before + 1, 'no retry after Tandem answered');
  // The user approves: Tandem sends ORCHESTRATOR_READY and takes the tools.
  await setMode('ok');
  await send(orchestrator, { type: 'ORCHESTRATOR_READY' });
  await until('the registration after approval', async () => (await registrations()).length === before + 2);
});

test('no answer at all is retried with growing waits until Tandem answers', async () => {
  await setMode('silent');
  const before = (await registrations()).length;
  await send(orchestrator, { type: 'ORCHESTRATOR_READY' });
  const tries = await until('three unanswered attempts', async () => {
    const all = await registrations();
    return all.length >= before + 3 && all.slice(before);
  });
  await setMode('ok');
  const [a, b, c] = tries.map((r) => r.at);
  assert.ok(b - a >= 200 && b - a < 1000, `first wait ~250 ms, was ${b - a}`);
  assert.ok(c - b >= 450 && c - b > b - a, `second wait ~500 ms and longer, was ${c - b}`);
  // The fourth attempt (after ~1 s) is answered; then it stops.
  await until('the answered attempt', async () => (await registrations()).length === before + 4, 4000);
  await sleep(2500);
  assert.equal((await registrations()).length, before + 4, 'no attempt after an answer');
});

test('tab.open opens a tab, tab.list lists it, tab.group groups it, tab.close closes it', async () => {
  const url = `${SITE}/hello`;
  const opened = await execute('tab.open', { url });
  assert.equal(opened.error, undefined, JSON.stringify(opened));
  assert.equal(opened.content[0].type, 'text');
  assert.match(opened.content[0].text, /^Opened https:\/\/tools\.tandem\.test\/hello in a new tab/);
  const tabId = opened.details.tabId;
  assert.equal(typeof tabId, 'number');
  const page = await until('the opened tab', () => tabWith(url));
  await page.waitForLoadState();
  assert.equal(await page.title(), 'Tool page /hello');

  const listed = await until('the tab\'s title in tab.list', async () => {
    const r = await execute('tab.list', {});
    return r.details?.some((t) => t.id === tabId && t.title === 'Tool page /hello') && r;
  });
  assert.deepEqual(listed.details.find((t) => t.id === tabId), { id: tabId, title: 'Tool page /hello', url });
  assert.match(listed.content[0].text, new RegExp(`- id ${tabId}: Tool page /hello — ${url}`));

  const grouped = await execute('tab.group', { tabIds: [tabId], title: 'Tools' });
  assert.equal(grouped.error, undefined, JSON.stringify(grouped));
  assert.match(grouped.content[0].text, /Grouped 1 tab\(s\) as "Tools"/);
  assert.equal(await page.evaluate(() => 1), 1); // still there

  const closed = await execute('tab.close', { tabId });
  assert.deepEqual(closed, { content: [{ type: 'text', text: `Closed tab ${tabId}.` }] });
  await until('the tab to close', () => !tabWith(url));
});

test('bad calls come back as ToolResult errors', async () => {
  const scheme = await execute('tab.open', { url: 'javascript:alert(1)' });
  assert.equal(scheme.error, 'only http and https URLs can be opened, not javascript:');
  assert.equal(scheme.content[0].text, `Error: ${scheme.error}`);
  const unknown = await execute('tab.explode', {});
  assert.match(unknown.error, /unknown tool "tab\.explode"; this provider offers: tab\.list, tab\.open, tab\.close, tab\.group/);
  const params = await execute('tab.close', { tabId: 'seven' });
  assert.match(params.error, /^invalid parameters for tab\.close:/);
  const missing = await execute('tab.close', { tabId: 2147483000 });
  assert.match(missing.error, /No tab with id/);
  const odd = await send(orchestrator, { type: 'SOMETHING_NEW' });
  assert.match(odd.error, /unknown message type/);
});

test('another extension is refused: no tool runs, no registration', async () => {
  const url = `${SITE}/stranger`;
  const registered = (await registrations()).length;
  const answer = await execute('tab.open', { url }, stranger);
  assert.deepEqual(answer, { ok: false, error: 'this tool provider accepts messages only from its orchestrator (Tandem)' });
  assert.equal((await send(stranger, { type: 'ORCHESTRATOR_READY' })).ok, false);
  assert.equal((await execute('tab.list', {}, stranger)).details, undefined, 'no tab list for a stranger');
  await sleep(700);
  assert.equal(tabWith(url), undefined, 'no tab opened');
  assert.equal((await registrations()).length, registered, 'no registration');
  assert.ok(providerConsole.messages.some((m) => m.type === 'warning' && /refused a message from [a-p]{32}/.test(m.text)),
    'the refusal is logged');
});

test('a stopped provider worker wakes for a TOOL_EXECUTE and answers it', async () => {
  // A page of the fake orchestrator sends the call: it has Tandem's id too, and outlives
  // the workers. Its CDP session sees every worker's state.
  const page = await browser.context.newPage();
  await page.goto(`chrome-extension://${TANDEM_ID}/page.html`);
  const cdp = await browser.context.newCDPSession(page);
  const status = new Map();
  cdp.on('ServiceWorker.workerVersionUpdated', ({ versions }) => {
    for (const v of versions) status.set(new URL(v.scriptURL).host, v.runningStatus);
  });
  await cdp.send('ServiceWorker.enable');
  await until('the provider worker to be seen running', () => status.get(providerId) === 'running');
  await cdp.send('ServiceWorker.stopAllWorkers');
  await until('the provider worker to stop', () => status.get(providerId) === 'stopped');

  const url = `${SITE}/woken`;
  const answer = await page.evaluate(([id, m]) => chrome.runtime.sendMessage(id, m),
    [providerId, { type: 'TOOL_EXECUTE', toolName: 'tab.open', params: { url }, toolCallId: 'wake' }]);
  assert.equal(answer.error, undefined, JSON.stringify(answer));
  await until('the tab opened by the woken worker', () => tabWith(url));
  assert.equal(status.get(providerId), 'running');
  await page.close();
});

test('the provider logged no errors', () => {
  assert.deepEqual(providerConsole.errors, []);
});
