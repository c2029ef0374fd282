// Two extensions that both call themselves "Probe Tools", written here and loaded beside the
// real dist/: the second one's request says the name is already used by another extension,
// with both ids shortened; Settings gives each row's controls names of their own; a denied
// provider offers Allow (Deny and Remove are separate); a provider that withdrew its tools is
// listed with a sentence; a destructive tool is flagged in the request; a registration without
// a name keeps the name the person knows. Each extension registers only when the test says.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { launchExtension } from './lib/browser.mjs';
import { closeSettings, toolProviders } from './lib/panel.mjs';

const TANDEM_ID = 'bkkhgefimkkanagkjaoehnjcmpolnojf';

const provider = (file, tools) => `
const TANDEM = ${JSON.stringify(TANDEM_ID)};
self.live = false;
self.named = true;
const tools = ${JSON.stringify(tools)};
self.register = () => chrome.runtime.sendMessage(TANDEM, Object.assign({ type: 'REGISTER_TOOLS', tools }, self.named ? { name: 'Probe Tools' } : {})).catch(() => {});
self.unregister = () => chrome.runtime.sendMessage(TANDEM, { type: 'UNREGISTER_TOOLS' }).catch(() => {});
chrome.runtime.onMessageExternal.addListener((msg, sender) => {
  if (sender.id === TANDEM && msg.type === 'ORCHESTRATOR_READY' && self.live) self.register();
  return false;
});
`;
const tool = (name, annotations) => ({ name, label: name, description: 'A probe.', parameters: { type: 'object', properties: {} }, annotations });

let browser, panel, dirs = [], first, second, third;

async function extension(name, tools) {
  const dir = await mkdtemp(path.join(os.tmpdir(), `tandem-${name}-`));
  dirs.push(dir);
  await writeFile(path.join(dir, 'manifest.json'), JSON.stringify({
    manifest_version: 3, name: 'Probe Tools', version: '1.0', background: { service_worker: `${name}.js` },
  }));
  await writeFile(path.join(dir, `${name}.js`), provider(name, tools));
  return dir;
}

async function worker(name) {
  const is = (w) => w.url().endsWith(`/${name}.js`);
  const w = browser.context.serviceWorkers().find(is) ?? await browser.context.waitForEvent('serviceworker', { predicate: is });
  return { w, id: new URL(w.url()).host, short: `${new URL(w.url()).host.slice(0, 4)}…` };
}

before(async () => {
  const a = await extension('first', [tool('probe_read', { readOnlyHint: true }), tool('probe_wipe', { destructiveHint: true })]);
  const b = await extension('second', [tool('probe_note')]);
  const c = await extension('third', [tool('probe_third')]);
  browser = await launchExtension({ extensionId: TANDEM_ID, others: [a, b, c] });
  first = await worker('first');
  second = await worker('second');
  third = await worker('third');
  panel = await browser.openPanel();
  await closeSettings(panel);
});
after(async () => {
  await browser?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const approval = () => panel.getByRole('group', { name: 'Tool provider' });
const register = (p) => p.w.evaluate(() => { self.live = true; return self.register(); });

test('a destructive tool is flagged; a second "Probe Tools" is told apart from the one allowed', async () => {
  await register(first);
  await approval().waitFor();
  assert.match(await approval().textContent(), /Careful: probe_wipe says it can delete or change things for good\./);
  assert.doesNotMatch(await approval().textContent(), /already used/);
  await approval().getByRole('button', { name: 'Allow' }).click();
  await approval().waitFor({ state: 'hidden' });

  await register(second);
  await approval().waitFor();
  const text = await approval().textContent();
  assert.match(text, new RegExp(`The name «Probe Tools» is already used by another extension \\(${first.short}, one you allowed\\): this request comes from a different extension \\(${second.short}\\)`), text);
  assert.ok(text.includes(second.id), 'the whole id of the one asking is shown too');
  // Tandem may not read the list of extensions (no "management" permission): it says so
  // where the icon would be.
  await approval().getByText(/Chrome does not let Tandem see this extension's icon or where it was installed from/).waitFor();
  assert.equal(await approval().getByRole('img').count(), 0);
  await approval().getByRole('button', { name: 'Deny' }).click();
  await approval().waitFor({ state: 'hidden' });
});

test('Settings: each row\'s controls have names of their own; the denied one offers Allow, apart from Remove', async () => {
  const list = await toolProviders(panel);
  for (const p of [first, second]) {
    assert.equal(await list.getByRole('button', { name: `Remove provider Probe Tools (${p.short})`, exact: true }).count(), 1);
  }
  assert.equal(await list.getByRole('button', { name: `Deny provider Probe Tools (${first.short})`, exact: true }).count(), 1);
  await list.getByText(/^Denied: it cannot give Tandem tools/).waitFor();
  // Allow the denied one: it registers again, and its tool is listed.
  await list.getByRole('button', { name: `Allow provider Probe Tools (${second.short})`, exact: true }).click();
  await list.getByRole('combobox', { name: /^probe_note from Probe Tools/ }).waitFor();
  assert.equal(await approval().isVisible(), false, 'allowed from Settings, not asked again');
});

test('a provider that withdrew its tools is listed with a sentence; a registration without a name keeps the name', async () => {
  const list = await toolProviders(panel);
  await first.w.evaluate(() => self.unregister());
  await list.getByText(/It offers no tools right now \(it withdrew them\)/).waitFor();
  await first.w.evaluate(() => { self.named = false; return self.register(); });
  await list.getByRole('combobox', { name: /^probe_wipe from Probe Tools/ }).waitFor();
  assert.equal(await list.getByText(/It offers no tools right now/).count(), 0);
  assert.equal(await list.getByRole('button', { name: `Remove provider Probe Tools (${first.short})`, exact: true }).count(), 1,
    'still called Probe Tools, not by its id');
});

test('where Chrome lets Tandem read its extensions, a look-alike\'s warning shows the icon Chrome has for it', async () => {
  // What chrome.management answers once the person granted it, for the one asking (this
  // test's own stand-in in the panel page: Tandem's manifest does not ask for it).
  await panel.evaluate((id) => {
    chrome.management = { get: async (asked) => (asked === id
      ? { id, installType: 'development', icons: [{ size: 16, url: `chrome://extension-icon/${id}/16/0` }, { size: 128, url: `chrome://extension-icon/${id}/128/0` }] }
      : null) };
  }, third.id);
  await register(third);
  await approval().waitFor();
  await approval().getByText(/already used by another extension/).waitFor();
  const icon = approval().getByRole('img', { name: 'Icon of the extension asking, as Chrome shows it' });
  await icon.waitFor();
  assert.equal(await icon.getAttribute('src'), `chrome://extension-icon/${third.id}/128/0`);
  await approval().getByText(/Chrome reports it as an unpacked extension/).waitFor();
  assert.equal(await approval().getByText(/does not let Tandem see/).count(), 0);
  await approval().getByRole('button', { name: 'Deny' }).click();
  await approval().waitFor({ state: 'hidden' });
});
