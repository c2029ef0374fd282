// A 10-step task (a delivery form: seven fields, two choices, Save) done once by the agent
// with a mock model that answers at once, saved as a workflow, then replayed. For each run:
// model requests, tokens (as the provider reported them, summed over the task's steps), wall
// time per step and where a step's time went (inject, snapshot, map, locate, act, settle,
// persist: `StepRecord.timings`, as the worker recorded them).
//   - the agent's wall time per step is the gap between two navigator requests (the model's
//     answer is instant, so it is Tandem's own per-step overhead plus the mock's round trip)
//   - the replay's is the time from the start page served to the form posted, over its steps
//     (no model request is expected)
// Prints figures; asserts nothing.
import path from 'node:path';
import { launchExtension, repoRoot } from '../tests/e2e/lib/browser.mjs';
import { openTaskMode } from '../tests/e2e/lib/panel.mjs';
import { startMockProvider } from '../tests/e2e/lib/mock-provider.mjs';
import { routeSite } from '../tests/e2e/lib/fixtures.mjs';
import { alwaysAllow, lastUserText, useMockProvider } from '../tests/e2e/lib/agent-harness.mjs';
import { elements } from '../tests/e2e/lib/scripted-shopper.mjs';

// The ten steps, in the order the model takes them: [action, field's accessible name, value].
const STEPS = [
  ['type', 'Full name', 'Ada Lovelace'],
  ['type', 'Email', 'ada@example.test'],
  ['type', 'Phone', '+44 20 7946 0000'],
  ['type', 'Street', '12 St James Square'],
  ['type', 'City', 'London'],
  ['type', 'Postcode', 'SW1Y 4JH'],
  ['select_option', 'Country', 'United Kingdom'],
  ['select_option', 'Delivery', 'Express'],
  ['type', 'Notes for the courier', 'Ring twice'],
  ['click', 'Save', null],
];

const page = (title, body) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;
const field = (name, type = 'text') => `<p><label>${name} <input type="${type}" name="${name.toLowerCase().replace(/\W+/g, '-')}"></label></p>`;
const form = page('Delivery details', `<h1>Delivery details</h1><form action="/save" method="post">
  ${field('Full name')}${field('Email', 'email')}${field('Phone', 'tel')}${field('Street')}${field('City')}${field('Postcode')}
  <p><label>Country <select name="country"><option>France</option><option>Germany</option><option>United Kingdom</option></select></label></p>
  <p><label>Delivery <select name="delivery"><option>Standard</option><option>Express</option></select></label></p>
  <p><label>Notes for the courier <textarea name="notes"></textarea></label></p>
  <button>Save</button></form><a href="/">Home</a>`);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => `${x.toFixed(0)} ms`;
const PHASES = ['inject', 'snapshot', 'map', 'locate', 'act', 'settle', 'persist'];

/** Served pages and posts with the time they were served, and what each post carried. */
const served = [];
const routes = {
  '/profile': () => { served.push({ at: performance.now(), what: 'form' }); return form; },
  '/save': (rec) => { served.push({ at: performance.now(), what: 'save', body: rec.body }); return page('Saved', '<h1>Saved</h1><p>Your delivery details are saved.</p>'); },
  '/': page('Home', '<h1>Home</h1><a href="/profile">Delivery details</a>'),
};

const mock = await startMockProvider({ delayMs: 0 });
const AT_ONCE = { batch: 1_000_000 };
const log = [];
let taken = 0;
mock.setDefault((rec) => {
  const turn = lastUserText(rec.body);
  const planner = turn.startsWith('ROLE: PLANNER');
  log.push({ at: performance.now(), planner });
  if (planner) return { ...AT_ONCE, reply: JSON.stringify({ plan: '1. fill the form 2. save', complete: /navigator says the task is done/.test(turn) }) };
  if (taken >= STEPS.length || /\/save$/.test((turn.match(/^url: (.*)$/m) ?? [])[1] ?? '')) {
    return { ...AT_ONCE, reply: JSON.stringify({ action: 'done', success: true, answer: 'Saved.' }) };
  }
  const [action, name, value] = STEPS[taken++];
  const el = elements(turn).find((e) => e.name === name);
  const answer = { action, element: el?.id ?? 0 };
  if (action === 'type') answer.text = value;
  if (action === 'select_option') answer.option = value;
  return { ...AT_ONCE, reply: JSON.stringify(answer) };
});

const browser = await launchExtension({ dist: path.join(repoRoot, 'dist') });
try {
  const site = await routeSite(browser.context, { origin: 'https://forms.tandem.test', routes });
  const panel = await browser.openPanel();
  await alwaysAllow(panel, [site.host]);
  await useMockProvider(panel, mock, { key: 'sk-bench-12345678', model: 'gpt-bench' });
  const status = panel.getByRole('status', { name: 'Task status' });
  const stored = async () => {
    const raw = await panel.evaluate(() => chrome.storage.session.get('agentTask').then((x) => x.agentTask));
    return typeof raw === 'string' ? JSON.parse(raw) : raw;
  };

  // 1. The agent does it, with the model.
  const tab = await browser.context.newPage();
  await tab.goto(site.url + '/profile');
  await tab.bringToFront();
  await openTaskMode(panel);
  await panel.getByRole('textbox', { name: 'Task' }).fill(
    'Fill in my delivery details: full name Ada Lovelace, email ada@example.test, phone +44 20 7946 0000, street 12 St James Square, city London, postcode SW1Y 4JH, country United Kingdom, Express delivery, notes for the courier Ring twice; then save.');
  const agentStarted = performance.now();
  await panel.getByRole('button', { name: 'Start task' }).dispatchEvent('click');
  await status.filter({ hasText: /^(Done|Failed)/ }).waitFor({ timeout: 120_000 });
  const agentTask = await stored();
  const agentRequests = mock.requests.length;
  const navigatorGaps = [];
  for (let i = 1; i < log.length; i++) if (!log[i].planner && !log[i - 1].planner) navigatorGaps.push(log[i].at - log[i - 1].at);
  const agentSave = served.find((s) => s.what === 'save');

  // 2. Saved as a workflow, then replayed: the Workflows view's Run.
  await panel.getByRole('button', { name: 'Save as workflow', exact: true }).click();
  // The proposed name is taken as it is.
  await panel.getByRole('button', { name: 'Save workflow', exact: true }).click();
  await panel.getByRole('status', { name: 'Task notice' }).filter({ hasText: /Saved as the workflow/ }).waitFor();
  const [flow] = await panel.evaluate(() => chrome.storage.local.get('workflows').then((x) => x.workflows));
  mock.reset();
  served.length = 0;
  await panel.getByRole('button', { name: 'Workflows', exact: true }).click();
  const replayStarted = performance.now();
  await panel.getByRole('button', { name: `Run ${flow.name}` }).dispatchEvent('click');
  await status.filter({ hasText: /^(Done|Failed|Paused|Cancelled): Workflow/ }).waitFor({ timeout: 120_000 });
  const replayTask = await stored();
  const start = served.find((s) => s.what === 'form');
  const save = served.find((s) => s.what === 'save');

  const actionSteps = (task) => (task?.steps ?? []).filter((s) => s.timings);
  const tokens = (task) => (task?.steps ?? []).reduce((sum, s) => sum + (s.tokens ?? 0), 0);
  const breakdown = (task) => {
    const timed = actionSteps(task);
    if (!timed.length) return 'no timed steps';
    const cells = PHASES.map((p) => `${p} ${median(timed.map((s) => s.timings[p] ?? 0)).toFixed(0)}`);
    const sum = median(timed.map((s) => PHASES.reduce((t, p) => t + (s.timings[p] ?? 0), 0)));
    return `${cells.join(', ')}; sum ${sum.toFixed(0)} (median ms over ${timed.length} steps)`;
  };
  const steps = flow.steps.length;
  console.log(`workflow: ${steps} steps saved from the agent's run (${flow.params.length} parameters); the same form posted both times: ${agentSave?.body === save?.body}`);
  console.log(`agent  (mock model, instant): status "${agentTask?.status}", ${agentRequests} model requests (${(agentRequests / steps).toFixed(1)} per step), ${tokens(agentTask)} tokens (${(tokens(agentTask) / steps).toFixed(0)} per step)`);
  console.log(`agent  wall time per step (navigator request → next, model time ~0): median ${ms(median(navigatorGaps))} (min ${ms(Math.min(...navigatorGaps))}, max ${ms(Math.max(...navigatorGaps))}, n=${navigatorGaps.length})`);
  if (agentSave) console.log(`agent  wall time per step, planner included (Start → form posted, over ${steps} steps): ${ms((agentSave.at - agentStarted) / steps)}`);
  console.log(`agent  per-step breakdown: ${breakdown(agentTask)}`);
  console.log(`replay: status "${replayTask?.status}", ${mock.requests.length} model requests, ${tokens(replayTask)} tokens`);
  if (start && save) {
    console.log(`replay wall time per step (start page served → form posted, over ${steps} steps): ${ms((save.at - start.at) / steps)}`);
    console.log(`replay wall time per step, start page included (Run → form posted, over ${steps} steps): ${ms((save.at - replayStarted) / steps)}`);
  } else {
    console.log(`replay: the start page or the post was not seen (${served.map((s) => s.what).join(', ')})`);
  }
  console.log(`replay per-step breakdown: ${breakdown(replayTask)}`);
} finally {
  await browser.close();
  await mock.close();
}
