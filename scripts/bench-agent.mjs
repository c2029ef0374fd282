// The agent's figures on a generated 2,000-element page, with a mock model that answers at
// once (so model time is ~0 and what is measured is Tandem's own work):
//   - element-map size: characters and estimated tokens of the element list sent per step
//   - snapshot time (the in-page driver alone; elements far from the viewport are described
//     briefly, see DESCRIBED_BELOW in the driver) and observe time (task start → first model
//     request: driver injection, snapshot, element map, render, session set-up)
//   - the driver's act(click) alone: scroll into view, hit-test, the pointer sequence, and the
//     wait for the click's effects (the generated buttons do nothing, so it is the full wait
//     that ends in "no visible change")
//   - per-step overhead excluding LLM time: from one navigator answer to the next navigator
//     request (the element from the look the model answered, or by signature in a fresh
//     snapshot when the page changed; highlight and act, whose watch takes the next look;
//     settle, persist, observe again). The watch alone waits 80 ms when a click changes
//     nothing, as these do.
//   - its breakdown (inject, snapshot, map, locate, act, settle, persist), as the worker recorded it
//     in each action step of the task (`StepRecord.timings`), and the same step split by where
//     its time goes: the driver in the page (its act and watch; of it, the look), settle, and
//     the worker (messaging, element map, saving the task, the rest)
//   - screenshots (`look`) on a canvas chart with a model that takes images: per step, the
//     image's estimated tokens, its size on the wire and the time to capture and mark it
// Prints figures; asserts nothing.
import fs from 'node:fs';
import path from 'node:path';
import { launchExtension, repoRoot } from '../tests/e2e/lib/browser.mjs';
import { openTaskMode } from '../tests/e2e/lib/panel.mjs';
import { startMockProvider, tokenize } from '../tests/e2e/lib/mock-provider.mjs';
import { routeSite } from '../tests/e2e/lib/fixtures.mjs';
import { alwaysAllow, lastUserText, useMockProvider } from '../tests/e2e/lib/agent-harness.mjs';

const ELEMENTS = 2000;
// Steps measured: the median of a few is at the mercy of this machine's noise.
const STEPS = 16;

function generatedPage() {
  const rows = [];
  for (let i = 0; i < ELEMENTS / 4; i++) {
    rows.push(`<tr><td><a href="/item/${i}">Item ${i}</a></td><td><button type="button">Add ${i}</button></td>` +
      `<td><input aria-label="Quantity ${i}" type="number" value="1"></td><td><label><input type="checkbox"> Gift ${i}</label></td></tr>`);
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Big page</title></head><body><h1>Catalogue</h1><table>${rows.join('')}</table></body></html>`;
}

// A documentation page as such sites are built: a long sidebar of section links, a table of
// contents, and a reference whose entries repeat the same "Copy" / "Edit" / "#" links.
function docsPage() {
  const nav = [];
  for (let g = 0; g < 12; g++) {
    const items = [];
    for (let i = 0; i < 25; i++) items.push(`<li><a href="/docs/${g}/${i}">Section ${g}.${i} of the guide</a></li>`);
    nav.push(`<li><details open><summary>Chapter ${g}</summary><ul>${items.join('')}</ul></details></li>`);
  }
  const entries = [];
  for (let i = 0; i < 120; i++) {
    entries.push(`<section><h2 id="fn${i}">function_${i}(options)<a href="#fn${i}">#</a></h2>` +
      `<p>Returns the ${i}th value. Options: <code>timeout</code>, <code>retries</code>.</p>` +
      `<pre><code>client.function_${i}({ timeout: 30 })</code></pre><button type="button">Copy</button> <a href="/edit/${i}">Edit this entry</a></section>`);
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Reference — Docs</title></head><body>` +
    `<header><a href="/">Docs</a> <input type="search" aria-label="Search docs"> <a href="/login">Sign in</a></header>` +
    `<div style="display:flex"><nav aria-label="Navigation" style="width:260px"><ul>${nav.join('')}</ul></nav>` +
    `<main><h1>API reference</h1>${entries.join('')}</main></div></body></html>`;
}

// A bar chart drawn on a canvas that covers most of the viewport, with no text alternative:
// the agent sends a screenshot unasked.
function chartPage() {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sales chart</title></head><body>` +
    `<h1>Sales</h1><canvas id="c" width="1000" height="480"></canvas><script>` +
    `const g = document.getElementById('c').getContext('2d');` +
    `['#e53935', '#43a047', '#1e88e5', '#fb8c00'].forEach((c, i) => { g.fillStyle = c; g.fillRect(60 + i * 240, 100 + i * 40, 160, 340 - i * 40); });` +
    `document.getElementById('c').addEventListener('click', () => {});</script></body></html>`;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs) => `median ${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}, n=${xs.length})`;

const mock = await startMockProvider({ delayMs: 0 });
// The whole answer in one write, as a model that answers at once: paced a token at a time,
// even with no delay, the mock's own timers (~1 ms a token in node, 10-15 ms an answer) were
// counted as Tandem's overhead.
const AT_ONCE = { batch: 1_000_000 };
// TANDEM_DIST: another build to measure (a branch's dist/ copied aside, to compare two).
const dist = path.resolve(process.env.TANDEM_DIST || path.join(repoRoot, 'dist'));
const browser = await launchExtension({ dist });
try {
  // An https site the manifest does not list, as users' sites are, already trusted by the user.
  const site = await routeSite(browser.context, { routes: { '/big': generatedPage(), '/docs': docsPage(), '/chart': chartPage() } });
  const log = [];
  let clicks = 0;
  // Known here, in node, when the model says done: the status is read only after that, so
  // that Playwright's polling of the panel does not share the machine with the steps timed.
  let answeredDone;
  const done = new Promise((r) => { answeredDone = r; });
  mock.setDefault((rec) => {
    const t = lastUserText(rec.body);
    const planner = t.startsWith('ROLE: PLANNER');
    log.push({ at: performance.now(), planner, turn: t });
    if (planner) return { ...AT_ONCE, reply: JSON.stringify({ plan: '1. add items', complete: true }) };
    if (clicks >= STEPS) {
      answeredDone();
      return { ...AT_ONCE, reply: JSON.stringify({ action: 'done', success: true, answer: 'ok' }) };
    }
    // A different "Add n" button each step (so the loop detector stays quiet).
    const buttons = [...t.matchAll(/^\[(\d+)\]\*? button "Add (\d+)"/gm)];
    const pick = buttons[clicks++ % Math.max(buttons.length, 1)];
    return { ...AT_ONCE, reply: JSON.stringify(pick ? { action: 'click', element: Number(pick[1]) } : { action: 'wait', ms: 0 }) };
  });

  const panel = await browser.openPanel();
  await alwaysAllow(panel, [site.host]);
  await useMockProvider(panel, mock, { key: 'sk-bench-12345678', model: 'gpt-bench' });

  const tab = await browser.context.newPage();
  await tab.goto(site.url + '/big');

  // The driver alone, in the page (main world here; the extension runs it isolated).
  await tab.addScriptTag({ content: fs.readFileSync(path.join(dist, 'content/driver.js'), 'utf8') });
  const snapshots = [];
  let candidates = 0;
  // Warmed up first, as in a task (the driver's code is compiled by the second step): the
  // first calls measure the JavaScript engine, not the snapshot.
  await tab.evaluate(() => { for (let i = 0; i < 3; i++) globalThis.__tandemDriver.snapshot({}); });
  for (let i = 0; i < 10; i++) {
    const r = await tab.evaluate(() => {
      const t0 = performance.now();
      const s = globalThis.__tandemDriver.snapshot({});
      return { ms: performance.now() - t0, n: s.elements.length, brief: s.elements.filter((e) => e.brief).length, bytes: JSON.stringify(s).length };
    });
    snapshots.push(r.ms);
    candidates = r;
  }

  const acts = [];
  for (let i = 0; i < 5; i++) {
    acts.push(await tab.evaluate(async (i) => {
      const s = globalThis.__tandemDriver.snapshot({});
      const button = s.elements.filter((e) => e.tag === 'button')[i * 7];
      const t0 = performance.now();
      await globalThis.__tandemDriver.act(button.handle, { op: 'click' });
      return performance.now() - t0;
    }, i));
  }
  await tab.evaluate(() => window.scrollTo(0, 0));

  await tab.bringToFront();
  await openTaskMode(panel);
  await panel.getByRole('textbox', { name: 'Task' }).fill('Add some items');
  const started = performance.now();
  await panel.getByRole('button', { name: 'Start task' }).dispatchEvent('click');
  await Promise.race([done, new Promise((r) => setTimeout(r, 120_000).unref())]);
  await panel.getByRole('status', { name: 'Task status' }).filter({ hasText: /^(Done|Failed)/ }).waitFor({ timeout: 120_000 });

  const first = log[0];
  const nav = log.find((l) => !l.planner);
  const list = (nav?.turn.match(/⟦untrusted data: element list⟧[\s\S]*?⟦\/untrusted data⟧/) ?? [''])[0];
  const listed = (list.match(/^\[\d+\]/gm) ?? []).length;
  // Between two navigator requests with no planner request in between, by the first one's
  // rank among navigator requests (the action step it answered).
  const gaps = [];
  const gapOf = new Map();
  for (let i = 0, rank = -1; i < log.length; i++) {
    if (log[i].planner) continue;
    if (i > 0 && !log[i - 1].planner) {
      gaps.push(log[i].at - log[i - 1].at);
      gapOf.set(rank, log[i].at - log[i - 1].at);
    }
    rank++;
  }
  console.log(`generated page: ${ELEMENTS} interactive elements; the driver reports ${candidates.n} candidates, ${candidates.brief} of them far from the viewport and described briefly (${(candidates.bytes / 1024).toFixed(0)} KB JSON)`);
  console.log(`element map sent per step: ${listed} elements listed, ${list.length} chars, ~${tokenize(list).length} tokens (word-ish), ~${Math.ceil(list.length / 4)} tokens (chars/4)`);
  for (const line of list.split('\n').filter((l) => l.startsWith('…'))) console.log(`  ${line}`);
  console.log(`driver snapshot alone (in page, warm):     ${fmt(snapshots)}`);
  console.log(`driver act(click) alone (in page, incl. the wait for effects): ${fmt(acts)}`);
  console.log(`task start → first model request (inject + snapshot + map + session): ${(first.at - started).toFixed(0)} ms`);
  console.log(`per-step overhead excluding LLM time (navigator answer → next navigator request: locate, act and its watch, settle only when a page loads, persist, observe): ${gaps.length ? fmt(gaps) : 'no steps measured'}`);
  console.log(`task status: ${await panel.getByRole('status', { name: 'Task status' }).textContent()}`);
  // Where each action step's time went, as the worker recorded it in the task (debug data).
  const stored = await panel.evaluate(() => chrome.storage.session.get('agentTask').then((x) => x.agentTask));
  const task = typeof stored === 'string' ? JSON.parse(stored) : stored;
  const timed = (task?.steps ?? []).filter((s) => s.timings);
  if (timed.length) {
    const phases = ['inject', 'snapshot', 'map', 'locate', 'act', 'settle', 'persist'];
    const cells = phases.map((p) => `${p} ${median(timed.map((s) => s.timings[p])).toFixed(0)}`);
    const total = median(timed.map((s) => phases.reduce((sum, p) => sum + s.timings[p], 0)));
    console.log(`per-step phases, median ms over ${timed.length} action steps, as the worker timed them: ${cells.join(', ')}; sum ${total.toFixed(0)}`);
    // The same step split by where its time goes. The gap after navigator request i (its
    // answer → request i+1) holds action step i's act and save and step i+1's map.
    const split = [...gapOf].filter(([i]) => timed[i]).map(([i, gap]) => {
      const t = timed[i].timings;
      const next = timed[i + 1]?.timings ?? t;
      const page = t.page ?? 0;
      const messaging = t.act - page + t.inject + t.snapshot + t.locate;
      const background = gap - page - t.settle;
      return { gap, page, look: t.look ?? 0, settle: t.settle, background, messaging, map: next.map, persist: t.persist,
        rest: background - messaging - next.map - t.persist };
    });
    const m = (k) => median(split.map((x) => x[k])).toFixed(0);
    console.log(`per-step overhead split, median ms over ${split.length} steps (model time excluded): ${m('gap')} in all`);
    console.log(`  driver, in the page:  ${m('page')} (the act and its watch for the click's effects, which lasts 80 ms when nothing changes; of it, the look that is the next step's snapshot: ${m('look')})`);
    console.log(`  settle:               ${m('settle')} (only after a navigation)`);
    console.log(`  background (worker):  ${m('background')} (executeScript messaging ${m('messaging')}, element map ${m('map')}, saving the task ${m('persist')}, the rest ${m('rest')}: prompt, provider request, records, chrome.* calls)`);
    // One look per step while the page stays as the model saw it; a second only when it changed.
    const looks = timed.map((s) => s.timings.snapshots ?? 0);
    console.log(`snapshots per action step: ${looks.join(' ')} (the look the model answered is acted on unless the page changed meanwhile)`);
  } else {
    console.log('per-step breakdown: no timed steps recorded');
  }

  // The documentation page: one step, to read what one step sends.
  await tab.goto(site.url + '/docs');
  await tab.bringToFront();
  log.length = 0;
  clicks = STEPS;
  await openTaskMode(panel);
  await panel.getByRole('textbox', { name: 'Task' }).fill('Find the timeout option of function_3');
  await panel.getByRole('button', { name: 'Start task' }).dispatchEvent('click');
  // The status still says how the first task ended: wait for this task's first step instead.
  for (const end = Date.now() + 60_000; !log.some((l) => !l.planner) && Date.now() < end;) await new Promise((r) => setTimeout(r, 100));
  const docsTurn = log.find((l) => !l.planner)?.turn ?? '';
  const docsList = (docsTurn.match(/⟦untrusted data: element list⟧[\s\S]*?⟦\/untrusted data⟧/) ?? [''])[0];
  const docsListed = (docsList.match(/^\[\d+\]/gm) ?? []).length;
  console.log(`documentation page (300 sidebar links, 120 reference entries): element list per step ${docsListed} elements listed, ${docsList.length} chars, ~${tokenize(docsList).length} tokens (word-ish), ~${Math.ceil(docsList.length / 4)} tokens (chars/4)`);
  for (const line of docsList.split('\n').filter((l) => l.startsWith('…'))) console.log(`  ${line}`);

  // Screenshots: a chart on a canvas, a model that takes images. Step 1 gets one unasked and
  // answers look, step 2 gets the one it asked for and waits, step 3 (the page as the first
  // automatic look showed it) gets none and says done.
  const docsId = (await panel.evaluate(() => chrome.storage.session.get('agentTask').then((x) => x.agentTask)))?.id;
  await panel.getByRole('status', { name: 'Task status' }).filter({ hasText: /^(Done|Failed)/ }).waitFor({ timeout: 60_000 });
  await useMockProvider(panel, mock, { key: 'sk-bench-12345678', model: 'gpt-4o' });
  const shotBytes = [];
  mock.setDefault((rec) => {
    const t = lastUserText(rec.body);
    if (t.startsWith('ROLE: PLANNER')) return { ...AT_ONCE, reply: JSON.stringify({ plan: '1. look', complete: true }) };
    const urls = (rec.body?.messages ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .filter((p) => p.type === 'image_url').map((p) => p.image_url.url);
    shotBytes.push(urls.reduce((n, u) => n + u.length, 0));
    const answer = [{ action: 'look' }, { action: 'wait', ms: 0 }][shotBytes.length - 1] ?? { action: 'done', success: true, answer: 'seen' };
    return { ...AT_ONCE, reply: JSON.stringify(answer) };
  });
  await tab.goto(site.url + '/chart');
  await tab.bringToFront();
  await openTaskMode(panel);
  await panel.getByRole('textbox', { name: 'Task' }).fill('Which quarter sold most?');
  await panel.getByRole('button', { name: 'Start task' }).dispatchEvent('click');
  const readTask = async () => {
    const raw = await panel.evaluate(() => chrome.storage.session.get('agentTask').then((x) => x.agentTask));
    return typeof raw === 'string' ? JSON.parse(raw) : raw;
  };
  let chartTask;
  for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
    chartTask = await readTask();
    if (chartTask?.id !== docsId && ['done', 'failed', 'cancelled', 'Done', 'Failed', 'Cancelled'].includes(String(chartTask?.status))) break;
  }
  const actionSteps = (chartTask?.steps ?? []).filter((s) => s.timings);
  actionSteps.forEach((s, i) => {
    const tokens = s.timings.image_tokens ?? s.timings.imageTokens ?? 0;
    const ms = s.timings.shot ?? 0;
    const kb = (shotBytes[i] ?? 0) / 1024;
    console.log(`screenshot, step ${i + 1}: ${tokens ? `~${tokens} image tokens (OpenAI, 1024 px long side), ${kb.toFixed(0)} KB as a data: URL, ${ms.toFixed(0)} ms to capture and mark` : 'none'}`);
  });
} finally {
  await browser.close();
  await mock.close();
}
