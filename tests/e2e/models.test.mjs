// Settings' model picker, as a new user meets it: choose a provider, enter the Model field or
// press "List models", and the provider's own list (fetched from a local server speaking each
// wire format) becomes the field's suggestions; a failure says why and typing still works.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { openSettings } from './lib/panel.mjs';

const KEY = 'sk-models-abcdefgh12345678';
let browser, mock, panel;

before(async () => {
  mock = await startMockProvider({ apiKey: KEY, ollamaOrigins: ['chrome-extension://*'] });
  browser = await launchExtension();
  panel = await browser.openPanel();
  const settings = panel.getByRole('region', { name: 'Settings' });
  if (!(await settings.isVisible())) await panel.getByRole('button', { name: 'Settings' }).click();
});
after(async () => {
  await browser?.close();
  await mock?.close();
});
beforeEach(() => mock.reset());

const options = () => panel.locator('#model-options option').evaluateAll((os) => os.map((o) => ({ value: o.value, label: o.label })));
const status = () => panel.getByRole('status', { name: 'Model list' });

async function choose(label, base, key = KEY) {
  await panel.getByLabel('Provider', { exact: true }).selectOption({ label });
  await panel.getByLabel('Base URL').fill(base);
  await panel.getByLabel('API key').fill(key);
}

const formats = [
  { label: 'OpenAI-compatible', base: () => `${mock.url}/v1`, path: '/v1/models', models: ['gpt-4o', 'gpt-4o-mini'], window: 'gpt-4o · 128,000 tokens' },
  { label: 'Anthropic', base: () => `${mock.url}/v1`, path: '/v1/models', models: ['claude-haiku-4-5', 'claude-sonnet-4-5'], window: 'claude-sonnet-4-5 · 200,000 tokens' },
  { label: 'Gemini', base: () => `${mock.url}/v1beta`, path: '/v1beta/models', models: ['gemini-2.5-flash', 'gemini-2.5-pro'], window: 'gemini-2.5-pro · 1,048,576 tokens' },
  { label: 'Ollama', base: () => mock.url, path: '/api/tags', models: ['gemma3:1b', 'llama3.2:latest'], window: 'llama3.2:latest · 131,072 tokens' },
];
for (const f of formats) {
  test(`"List models" on ${f.label} fills the Model field's suggestions, with context windows`, async () => {
    await choose(f.label, f.base());
    await panel.getByRole('button', { name: 'List models' }).click();
    await status().filter({ hasText: `${f.models.length} models from ${f.label}` }).waitFor();
    const listed = await options();
    assert.deepEqual(listed.map((o) => o.value), f.models, 'exactly what the provider serves (embedding models left out)');
    assert.ok(listed.some((o) => o.label === f.window), JSON.stringify(listed));
    const req = mock.requests.find((r) => r.path === f.path && r.method === 'GET');
    assert.ok(req, `the list was asked at ${f.path}: ${mock.requests.map((r) => r.path)}`);
    // The list suggests; typing a name that is not in it still works.
    await panel.getByLabel('Model', { exact: true }).fill('my-own-model');
    assert.equal(await panel.getByLabel('Model', { exact: true }).inputValue(), 'my-own-model');
  });
}

test('the saved key is used when the key field is empty, and entering the Model field asks nothing', async () => {
  await choose('OpenAI-compatible', `${mock.url}/v1`);
  await panel.getByLabel('Model', { exact: true }).fill('gpt-4o');
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByRole('status', { name: 'Settings status' }).filter({ hasText: 'Saved' }).waitFor();
  // Saving closed Settings; the user opens it again.
  await openSettings(panel);
  // Another provider and back: the list shown is for the provider shown.
  await panel.getByLabel('Provider', { exact: true }).selectOption({ label: 'Anthropic' });
  assert.deepEqual(await options(), [], 'no other provider\'s models');
  await panel.getByLabel('Provider', { exact: true }).selectOption({ label: 'OpenAI-compatible' });
  assert.equal(await panel.getByLabel('API key').inputValue(), '', 'the key is never shown back');
  mock.reset();
  await panel.getByLabel('Model', { exact: true }).focus();
  await panel.getByLabel('Base URL').focus();
  assert.equal(mock.requests.length, 0, 'a provider is not contacted because a field was entered');
  await panel.getByRole('button', { name: 'List models' }).click();
  await status().filter({ hasText: '2 models from OpenAI-compatible' }).waitFor();
  const req = mock.requests.find((r) => r.path === '/v1/models');
  assert.equal(req.headers.authorization, `Bearer ${KEY}`, 'the saved key, from the worker');
  assert.ok(!(await panel.locator('body').textContent()).includes(KEY));
});

test('a wrong key is named, the list stays empty, and the typed model is kept', async () => {
  await choose('Anthropic', `${mock.url}/v1`, 'sk-ant-wrong-00000000');
  await panel.getByLabel('Model', { exact: true }).fill('claude-typed-by-hand');
  await panel.getByRole('button', { name: 'List models' }).click();
  await status().filter({ hasText: 'rejected the API key' }).waitFor();
  assert.deepEqual(await options(), []);
  assert.equal(await panel.getByLabel('Model', { exact: true }).inputValue(), 'claude-typed-by-hand');
});

test('a server that is down gets a sentence, not a silent empty list', async () => {
  await choose('OpenAI-compatible', 'http://127.0.0.1:9/v1', '');
  await panel.getByRole('button', { name: 'List models' }).click();
  await status().filter({ hasText: 'could not be reached' }).waitFor();
  assert.deepEqual(await options(), []);
});
