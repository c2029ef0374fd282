// axe-core (WCAG 2.1 A and AA rules, and its best practices: one main landmark, everything in a
// landmark) over every view of the real panel, light and dark: the
// conversation (an answer with a link, code and a table), a tool provider's request, Settings
// with its Tools, a tool call waiting on Ask, and a task running through each of its questions
// (site access, an irreversible click, a password field, a question from the agent) to its
// end and the name asked when it is saved as a workflow. Zero violations is the bar; a failure lists each rule with the elements it found.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { startAgentEnv, scriptedModel } from './lib/agent-harness.mjs';
import { elements, find, planner } from './lib/scripted-shopper.mjs';
import { closeSettings, lastAnswer, openSettings, sendMessage, waitIdle } from './lib/panel.mjs';

const require = createRequire(import.meta.url);
const AXE = readFile(require.resolve('axe-core/axe.min.js'), 'utf8');
const TANDEM_ID = 'bkkhgefimkkanagkjaoehnjcmpolnojf';
const ORIGIN = 'https://account.tandem.test';
const PAGE = `<!doctype html><title>Account</title><h1>Account</h1>
<button type="button" onclick="this.textContent = 'Account deleted'">Delete account</button>
<label>Password <input type="password"></label>`;

const PROBE = `
const TANDEM = ${JSON.stringify(TANDEM_ID)};
const tools = [{ name: 'probe_note', label: 'Write a note', description: 'Writes a note.', parameters: { type: 'object', properties: { text: { type: 'string' } } } }];
const register = () => chrome.runtime.sendMessage(TANDEM, { type: 'REGISTER_TOOLS', name: 'Probe Tools', tools }).catch(() => {});
chrome.runtime.onMessageExternal.addListener((msg, sender, sendResponse) => {
  if (sender.id !== TANDEM) return false;
  if (msg.type === 'ORCHESTRATOR_READY') { register(); return false; }
  if (msg.type === 'TOOL_EXECUTE') { sendResponse({ content: [{ type: 'text', text: 'Noted.' }] }); return false; }
  return false;
});
register();
`;

let env, panel, dir;

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tandem-a11y-'));
  await writeFile(path.join(dir, 'manifest.json'), JSON.stringify({
    manifest_version: 3, name: 'Probe Tools', version: '1.0', background: { service_worker: 'probe.js' },
  }));
  await writeFile(path.join(dir, 'probe.js'), PROBE);
  env = await startAgentEnv({ origin: ORIGIN, routes: { '/': PAGE }, trust: false, key: 'sk-test-a11y-12345678', extensionId: TANDEM_ID, others: [dir] });
  panel = env.panel;
  await panel.bringToFront();
});
after(async () => {
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs axe in the panel as it is now, in light and in dark; returns the violations found. */
async function audit(view) {
  const found = [];
  if (!(await panel.evaluate(() => typeof window.axe === 'object'))) await panel.evaluate(await AXE);
  for (const colorScheme of ['light', 'dark']) {
    await panel.emulateMedia({ colorScheme });
    const violations = await panel.evaluate(() => window.axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      resultTypes: ['violations'],
    }).then((r) => r.violations.map((v) => ({
      id: v.id,
      help: v.help,
      nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary.split('\n').slice(1, 2).join('').trim()}`),
    }))));
    for (const v of violations) found.push(`${view} (${colorScheme}) ${v.id}: ${v.help}\n    ${v.nodes.join('\n    ')}`);
  }
  await panel.emulateMedia({ colorScheme: null });
  return found;
}

test('the conversation with an answer, a tool provider\'s request, Settings and its Tools', async () => {
  const problems = [];
  env.mock.setDefault({ reply: 'See [the docs](https://docs.example.com/guide) for more.\n\n```js\nconst a = 1;\n```\n\n| Size | Price |\n| --- | --- |\n| M | 10 |\n\nDone.' });
  await sendMessage(panel, 'Where are the docs?');
  await waitIdle(panel);
  await lastAnswer(panel).getByRole('link', { name: 'the docs' }).waitFor();
  const approval = panel.getByRole('group', { name: 'Tool provider' });
  await approval.waitFor();
  problems.push(...await audit('conversation with a provider request'));
  await approval.getByRole('button', { name: 'Allow' }).click();
  await approval.waitFor({ state: 'hidden' });
  await openSettings(panel);
  await panel.getByRole('list', { name: 'Tool providers' }).getByRole('listitem').first().waitFor();
  problems.push(...await audit('Settings and Tools'));
  await closeSettings(panel);
  assert.deepEqual(problems, [], problems.join('\n'));
});

test('a tool call waiting on Ask', async () => {
  const problems = [];
  env.mock.reset();
  env.mock.setDefault({ reply: 'ok' });
  const offered = env.mock.waitForRequest((r) => (r.tools ?? []).length > 0);
  await sendMessage(panel, 'Which tools?');
  const name = (await offered).tools.find((t) => t.endsWith('probe_note'));
  await waitIdle(panel);
  env.mock.reset();
  env.mock.script({ toolCall: { name, arguments: { text: 'milk' } } });
  env.mock.setDefault({ reply: 'Noted it.' });
  await sendMessage(panel, 'Note milk.');
  const question = lastAnswer(panel).getByRole('group', { name: 'Run Write a note?' });
  await question.waitFor();
  problems.push(...await audit('tool call question'));
  await question.getByRole('button', { name: 'Approve' }).click();
  await waitIdle(panel);
  assert.deepEqual(problems, [], problems.join('\n'));
});

test('a task through each of its questions', async () => {
  const problems = [];
  const script = [
    (els) => ({ action: 'click', element: find(els, (e) => e.name === 'Delete account').id }),
    (els) => ({ action: 'type', element: find(els, (e) => e.name === 'Password').id, text: 'guess' }),
    () => ({ action: 'ask_user', question: 'Anything else?' }),
  ];
  let n = 0;
  env.mock.reset();
  env.mock.setDefault(scriptedModel({
    planner,
    navigator: (turn) => (script[n] ? script[n++](elements(turn)) : { action: 'done', success: true, answer: 'The account is deleted.' }),
  }));
  await env.ui.startTask(env.tab, 'Delete my account', `${ORIGIN}/`);
  await panel.bringToFront();
  const ui = env.ui;
  await ui.siteAccess().waitFor({ timeout: 20_000 });
  problems.push(...await audit('task: site access'));
  await ui.button('Allow once').click();
  await ui.approval().waitFor();
  problems.push(...await audit('task: irreversible action'));
  await ui.button('Approve').click();
  await panel.getByLabel('Password for this field').waitFor();
  problems.push(...await audit('task: password field'));
  await panel.getByLabel('Password for this field').fill('hunter2-secret');
  await ui.button('Approve').click();
  await ui.question().waitFor();
  problems.push(...await audit('task: question from the agent'));
  await panel.getByRole('textbox', { name: 'Answer', exact: true }).fill('No');
  await ui.button('Send answer').click();
  await ui.waitStatus(/^Done/, 20_000);
  problems.push(...await audit('task: done, with its steps'));
  await ui.button('Save as workflow').click();
  await panel.getByRole('group', { name: 'Save as workflow' }).getByRole('textbox', { name: 'Workflow name' }).waitFor();
  problems.push(...await audit('task: done, naming its workflow'));
  assert.deepEqual(problems, [], problems.join('\n'));
});
