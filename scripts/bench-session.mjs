// Task-scoped against step-scoped model sessions, in headless Chromium with the real extension
// (issue 4). The same scripted agent task runs four times:
//   - Gemini Nano (a fake `LanguageModel` in the service worker, "On-device only"), task-scoped
//     (Tandem's design: one model session per task) and step-scoped (a new session with the
//     full prompt every step, as agent extensions commonly do; Settings' hidden
//     `agent.sessionScope: "step"`, which only this bench sets);
//   - the cloud ("Cloud only", OpenAI-compatible provider pointed at the local mock), both ways.
// Tokens are counted where they arrive, with one rule for both sides (the fake's own,
// ceil(chars / 4) per text): Nano = every `create()`'s initialPrompts + every prompt input, as
// recorded by the fake in `__fakeLanguageModel.calls`; cloud = every message (system included)
// of every request the mock provider received. Prints figures; asserts nothing. A run that does
// not end Done stops the bench with the task's status and timeline.
//
//   node scripts/bench-session.mjs [--dist <unpacked extension>]   (default: dist/, release)
import path from 'node:path';
import { launchExtension, repoRoot } from '../tests/e2e/lib/browser.mjs';
import { openTaskMode } from '../tests/e2e/lib/panel.mjs';
import { startMockProvider } from '../tests/e2e/lib/mock-provider.mjs';
import { routeSite } from '../tests/e2e/lib/fixtures.mjs';
import { alwaysAllow, lastUserText, useMockProvider } from '../tests/e2e/lib/agent-harness.mjs';

const distArg = process.argv.indexOf('--dist');
const dist = distArg > 0 ? path.resolve(process.argv[distArg + 1] ?? '') : path.join(repoRoot, 'dist');

// The task's rooms; the page has more, so the element list is a realistic size.
const TARGETS = ['Kitchen', 'Hall', 'Garage', 'Porch'];
const ROOMS = ['Kitchen', 'Hall', 'Living room', 'Office', 'Bedroom', 'Bathroom', 'Laundry', 'Garage', 'Porch', 'Garden'];
// A model the table knows (128,000-token window), so the budget trims nothing and the cloud
// figures show the session design, not the budget.
const CLOUD_MODEL = 'gpt-4o';
// The context window the fake reports (benches/session.rs's FakeNano uses the same figure). With
// the fake's default of 4096 the step-scoped run fails: its step 5 is refused with
// QuotaExceededError, since each new session must hold the whole history.
const NANO_WINDOW = 9216;
const TASK = `Switch on the lights in the ${TARGETS.slice(0, -1).join(', ')} and ${TARGETS.at(-1)}.`;

const tokens = (text) => Math.ceil(String(text ?? '').length / 4);
const text = (c) => (typeof c === 'string' ? c : (c ?? []).map((p) => p.text ?? p.value ?? '').join(''));

// A home-control page: per room a light switch (its label changes when pressed, in the page,
// like a real single-page app), a blinds button, a thermostat field and a details link.
function homePage() {
  const rooms = ROOMS.map((room, i) => `<section><h2>${room}</h2>
    <button type="button" data-room="${room}" class="light">Switch on ${room} light</button>
    <button type="button">Open ${room} blinds</button>
    <label>${room} thermostat <input type="number" value="${19 + (i % 4)}" min="10" max="28"></label>
    <a href="/rooms/${i}">${room} details</a></section>`).join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Home control</title></head>
<body><h1>Home control</h1>${rooms}
<script>
for (const b of document.querySelectorAll('button.light')) {
  b.addEventListener('click', () => {
    const on = b.textContent.startsWith('Switch on');
    b.textContent = (on ? 'Switch off ' : 'Switch on ') + b.dataset.room + ' light';
  });
}
</script></body></html>`;
}

// The scripted model, the same function for the fake LanguageModel (installed as source text in
// the service worker) and for the mock provider. It reads the element list of the turn and
// answers by VISIBLE TEXT. Ten calls, covering every reason the agent asks the planner: the
// plan at the start, three switches, the re-plan after 3 actions, a premature "done" that the
// planner's check rejects, the last switch, "done", and the check that confirms it.
function benchModel(turn) {
  // Self-contained (it is evaluated as source text in the worker): TARGETS again.
  const targets = ['Kitchen', 'Hall', 'Garage', 'Porch'];
  const els = [...turn.matchAll(/^\[(\d+)\]\*? (\S+) "([^"]*)"/gm)].map((m) => ({ id: Number(m[1]), role: m[2], name: m[3] }));
  const off = targets.map((room) => els.find((e) => e.role === 'button' && e.name === `Switch on ${room} light`)).filter(Boolean);
  if (turn.startsWith('ROLE: PLANNER')) {
    const checking = /navigator says the task is done/.test(turn);
    return JSON.stringify({
      plan: `1. ${targets.map((r) => `switch on the ${r} light`).join(', ')} 2. check that every one shows "Switch off" 3. report`,
      complete: checking && off.length === 0,
    });
  }
  const rejected = /not complete yet/.test(turn);
  if (off.length === 0 || (off.length === 1 && !rejected)) {
    return JSON.stringify({ action: 'done', success: true, answer: 'The four lights are on.' });
  }
  return JSON.stringify({ action: 'click', element: off[0].id });
}

const mock = await startMockProvider({ delayMs: 0 });

/** One run of the task; returns what the model side received, step by step. */
async function run({ provider, scope }) {
  mock.reset();
  mock.setDefault((rec) => ({ reply: benchModel(lastUserText(rec.body)) }));
  const browser = await launchExtension({ dist, fakeLanguageModel: { availability: 'available', delayMs: 1, contextWindow: NANO_WINDOW } });
  try {
    const site = await routeSite(browser.context, { routes: { '/': homePage() } });
    const panel = await browser.openPanel();
    await alwaysAllow(panel, [site.host]);
    await useMockProvider(panel, mock, { key: 'sk-bench-12345678', model: CLOUD_MODEL, onDevice: provider === 'nano' ? 'nano' : 'cloud' });
    // The scope is no panel setting: read-modify-write the stored Settings, as a user cannot.
    const stored = await panel.evaluate(async (sessionScope) => {
      const { settings } = await chrome.storage.local.get('settings');
      settings.agent = { ...(settings.agent ?? {}), sessionScope };
      await chrome.storage.local.set({ settings });
      return (await chrome.storage.local.get('settings')).settings;
    }, scope);
    if (stored.agent?.sessionScope !== scope || stored.onDevice !== (provider === 'nano' ? 'nano' : 'cloud')) {
      throw new Error(`bench-session: the stored settings are not what the run needs: ${JSON.stringify({ agent: stored.agent, onDevice: stored.onDevice })}`);
    }
    await browser.serviceWorker.evaluate(`(() => {
      ${benchModel}
      const cfg = globalThis.__fakeLanguageModel;
      cfg.calls.length = 0;
      cfg.reply = benchModel;
    })()`);

    const tab = await browser.context.newPage();
    await tab.goto(site.url + '/');
    await tab.bringToFront();
    await openTaskMode(panel);
    await panel.getByRole('textbox', { name: 'Task' }).fill(TASK);
    await panel.getByRole('button', { name: 'Start task' }).dispatchEvent('click');
    const status = panel.getByRole('status', { name: 'Task status' });
    await status.filter({ hasText: /^(Done|Failed|Cancelled)/ }).waitFor({ timeout: 120_000 });
    const final = (await status.textContent()) ?? '';
    const timeline = await panel.getByRole('list', { name: 'Steps' }).getByRole('listitem').allTextContents();
    if (!final.startsWith('Done')) {
      throw new Error(`bench-session: the ${provider} ${scope}-scoped run did not end Done.\n  status: ${final}\n  steps:\n    ${timeline.join('\n    ')}`);
    }
    const lights = await tab.evaluate(() => [...document.querySelectorAll('button.light')].map((b) => b.textContent));

    const calls = await browser.serviceWorker.evaluate(() => globalThis.__fakeLanguageModel.calls);
    const requests = mock.requests.filter((r) => r.provider === 'openai' && Array.isArray(r.body?.messages));
    return { provider, scope, final, timeline, lights, ...(provider === 'nano' ? nanoSteps(calls) : cloudSteps(requests)), calls, requests };
  } finally {
    await browser.close();
  }
}

// Nano: a step is a prompt; what was sent since the previous prompt (sessions created, their
// initialPrompts, appended messages) is charged to it.
function nanoSteps(calls) {
  const steps = [];
  let init = [];
  const inputText = (input) => (typeof input === 'string' ? input : (input ?? []).map((m) => text(m.content)).join('\n'));
  for (const c of calls) {
    if (c.method === 'create') init.push(...(c.options.initialPrompts ?? []).map((m) => ({ role: m.role, content: text(m.content) })));
    if (c.method === 'append') init.push({ role: 'user', content: inputText(c.input) });
    if (c.method === 'prompt' || c.method === 'promptStreaming') {
      const input = inputText(c.input);
      steps.push({ input, init, sent: init.reduce((n, m) => n + tokens(m.content), 0) + tokens(input) });
      init = [];
    }
  }
  return { steps, creates: calls.filter((c) => c.method === 'create').length, destroys: calls.filter((c) => c.method === 'destroy').length };
}

// Cloud: a step is a request; every message counts, the system message included.
function cloudSteps(requests) {
  const steps = requests.map((r) => {
    const messages = r.body.messages.map((m) => ({ role: m.role, content: text(m.content) }));
    const turn = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    return { input: turn, messages, sent: messages.reduce((n, m) => n + tokens(m.content), 0) };
  });
  // What a provider's prompt cache cannot serve: the messages after the longest common prefix
  // with the previous request.
  steps.forEach((s, i) => {
    const prev = steps[i - 1]?.messages ?? [];
    let shared = 0;
    while (shared < prev.length && shared < s.messages.length
      && prev[shared].role === s.messages[shared].role && prev[shared].content === s.messages[shared].content) shared++;
    s.uncached = s.messages.slice(shared).reduce((n, m) => n + tokens(m.content), 0);
  });
  return { steps, creates: 0, destroys: 0 };
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const pad = (v, n) => String(v).padStart(n);
const range = (xs) => (xs.length ? `${Math.min(...xs)}–${Math.max(...xs)}` : 'n/a');

function table(title, step, task, { uncached = false } = {}) {
  console.log(`\n${title}`);
  const n = Math.max(step.steps.length, task.steps.length);
  const head = ['step', 'role', 'step-scoped', 'task-scoped', ...(uncached ? ['task-scoped, not in previous request prefix'] : [])];
  console.log(`${pad(head[0], 4)}  ${head[1].padEnd(9)} ${pad(head[2], 11)} ${pad(head[3], 11)}${uncached ? `  ${head[4]}` : ''}`);
  for (let i = 0; i < n; i++) {
    const s = step.steps[i];
    const t = task.steps[i];
    const role = (t ?? s)?.input.startsWith('ROLE: PLANNER') ? 'planner' : 'navigator';
    console.log(`${pad(i + 1, 4)}  ${role.padEnd(9)} ${pad(s?.sent ?? '-', 11)} ${pad(t?.sent ?? '-', 11)}${uncached ? `  ${pad(t?.uncached ?? '-', 10)}` : ''}`);
  }
  const [S, T] = [sum(step.steps.map((x) => x.sent)), sum(task.steps.map((x) => x.sent))];
  const U = sum(task.steps.map((x) => x.uncached ?? 0));
  console.log(`${pad('total', 4)}  ${''.padEnd(9)} ${pad(S, 11)} ${pad(T, 11)}${uncached ? `  ${pad(U, 10)}` : ''}`);
  console.log(`ratio task-scoped / step-scoped: ${(T / Math.max(S, 1)).toFixed(3)} (targets: Nano <= 0.40, cloud <= 0.35)`);
  const same = step.steps.length === task.steps.length && step.steps.every((s, i) => s.input === task.steps[i].input);
  console.log(`model calls: ${task.steps.length} task-scoped, ${step.steps.length} step-scoped; same turns in both runs: ${same ? 'yes' : 'NO'}`);
  return { S, T, U };
}

try {
  const runs = {};
  for (const provider of ['nano', 'cloud']) {
    for (const scope of ['task', 'step']) {
      const started = performance.now();
      runs[`${provider}-${scope}`] = await run({ provider, scope });
      const r = runs[`${provider}-${scope}`];
      console.error(`  ran ${provider} ${scope}-scoped: ${r.steps.length} model calls, ${((performance.now() - started) / 1000).toFixed(1)} s; ${r.final}`);
    }
  }
  const nanoTask = runs['nano-task'];
  const nanoStep = runs['nano-step'];
  const cloudTask = runs['cloud-task'];
  const cloudStep = runs['cloud-step'];

  // Sizes as the model side saw them.
  const system = nanoTask.steps[0]?.init.find((m) => m.role === 'system')?.content ?? '';
  const cut = system.indexOf('NAVIGATOR: answer one flat JSON object');
  const [prompt, schema] = cut >= 0 ? [system.slice(0, cut).trim(), system.slice(cut)] : [system, ''];
  const planners = nanoTask.steps.filter((s) => s.input.startsWith('ROLE: PLANNER')).map((s) => tokens(s.input));
  const navigators = nanoTask.steps.filter((s) => !s.input.startsWith('ROLE: PLANNER')).map((s) => tokens(s.input));
  const replies = cloudTask.requests.at(-1)?.body.messages.filter((m) => m.role === 'assistant').map((m) => tokens(text(m.content))) ?? [];
  console.log(`Scripted task on a local page (${ROOMS.length} rooms, 4 controls each): "${TASK}"`);
  console.log(`Tokens = ceil(characters / 4) of each text, the fake LanguageModel's own rule, applied alike to what the fake and the mock received.`);
  console.log(`Sizes as received: system prompt ${tokens(prompt)}, schema instructions ${tokens(schema)} (one system message of ${tokens(system)}); ` +
    `per-step state: planner turns ${range(planners)}, navigator turns ${range(navigators)}; replies ${range(replies)}.`);
  console.log(`Steps: ${nanoTask.steps.map((s) => (s.input.startsWith('ROLE: PLANNER') ? 'P' : 'N')).join(' ')} (P planner, N navigator); lights after the task: ${nanoTask.lights.filter((l) => l.startsWith('Switch off')).length} on.`);

  const nano = table(`Gemini Nano (fake LanguageModel in the service worker, context window ${NANO_WINDOW}, On-device only): tokens sent per step`, nanoStep, nanoTask);
  console.log(`LanguageModel.create() calls: ${nanoTask.creates} task-scoped, ${nanoStep.creates} step-scoped; destroy() calls: ${nanoTask.destroys} and ${nanoStep.destroys}; ` +
    `cloud requests during the Nano runs: ${nanoTask.requests.length + nanoStep.requests.length}.`);
  console.log(`  step-scoped: every step creates a session whose initialPrompts hold the system message (${tokens(system)}) and every earlier turn and reply; ` +
    `task-scoped: the system message once, then only each new turn.`);
  console.log(`  the largest step-scoped step sends ${Math.max(...nanoStep.steps.map((s) => s.sent))} tokens into a ${NANO_WINDOW}-token window; ` +
    `a task-scoped step sends at most ${Math.max(...nanoTask.steps.map((s) => s.sent))}.`);

  const cloud = table(`Cloud (OpenAI-compatible wire format, model ${CLOUD_MODEL}, mock server, Cloud only): tokens sent per step`, cloudStep, cloudTask, { uncached: true });
  // Each task-scoped request repeats the previous one up to its last message (the turn
  // before last, compacted since), byte for byte.
  const stable = cloudTask.steps.every((s, i) => i === 0 ||
    JSON.stringify(cloudTask.steps[i - 1].messages.slice(0, -1)) === JSON.stringify(s.messages.slice(0, cloudTask.steps[i - 1].messages.length - 1)));
  console.log(`  a stateless API gets the system message and the transcript with every request; step scope sends every earlier turn whole, ` +
    `task scope sends earlier turns compact (their page state replaced by a one-line summary) and only the newest whole.`);
  console.log(`  Task scope keeps each request a byte-stable extension of the previous one up to its last message (${stable ? 'yes' : 'NO'}): with provider-side prompt caching only the last column is uncached input, ` +
    `${cloud.U} of ${cloud.T} tokens = ${(cloud.U / Math.max(cloud.T, 1)).toFixed(2)}.`);
  console.log(`\nSummary: Nano task-scoped / step-scoped = ${(nano.T / Math.max(nano.S, 1)).toFixed(2)}; cloud = ${(cloud.T / Math.max(cloud.S, 1)).toFixed(2)} ` +
    `(uncached share with prompt caching ${(cloud.U / Math.max(cloud.T, 1)).toFixed(2)}).`);
} finally {
  await mock.close();
}
