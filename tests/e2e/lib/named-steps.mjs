// A scripted model that acts like a model reading Tandem's element list: each task is a list
// of intended steps, and each step picks its control BY ITS VISIBLE NAME from the list of the
// turn it is taken in (as `elements` of lib/scripted-shopper.mjs reads it). A step whose
// name is not in the list ends the task and is recorded as a miss (the model could not see
// that control). `runNamedTask` starts the task in the panel, answers each approval, and
// records which step each question came on, so a test can judge the questions against the
// steps that needed one.

/** The named elements of `turn`'s list (`[n] role "name" …`) with their `value`, if shown. */
function listed(turn) {
  return [...turn.matchAll(/^\[(\d+)\]\*? (\S+) "((?:[^"\\]|\\.)*)"(.*)$/gm)]
    .map((m) => ({ id: Number(m[1]), role: m[2], name: m[3].replace(/\\(.)/g, '$1'), value: (m[4].match(/ value="([^"]*)"/) ?? [])[1] ?? '' }));
}

/**
 * Step helpers. `name`: the control's visible name (a string: exact; a RegExp: matched);
 * `role`: its role where the name alone is ambiguous; `empty`: only a field with no value (the
 * new row of a table form). `irreversible`: the step deletes, sends to others, unpublishes or
 * changes who may do what (Tandem must ask before it); `mayAsk`: a step where an honest
 * question is no noise (it leads to an irreversible one, or changes a shared page).
 */
export const click = (name, o = {}) => ({ action: 'click', name, ...o });
export const type = (name, text, o = {}) => ({ action: 'type', name, text, ...o });
export const choose = (name, option, o = {}) => ({ action: 'select_option', name, option, ...o });

const matches = (want, got) => (want instanceof RegExp ? want.test(got) : want === got);
const say = (s) => (s.name instanceof RegExp ? String(s.name) : `"${s.name}"`) + (s.role ? ` (${s.role})` : '');

/**
 * The navigator of a named-steps task: `state.steps` in order, one a turn. `state` gets
 * `current` (the index of the step last given) and `missed` ({step, list}) when a name is
 * not in the list. A step not in the list while the list says more is below is looked for
 * again after scrolling down (five times at most).
 */
export function namedStepsNavigator(state) {
  return (turn) => {
    if (/you denied/.test(turn)) return { action: 'done', success: true, answer: 'Stopped: the person said no.' };
    if (state.next >= state.steps.length) return { action: 'done', success: true, answer: 'All steps done.' };
    const step = state.steps[state.next];
    const el = listed(turn).find((e) => matches(step.name, e.name) && (!step.role || e.role === step.role) && (!step.empty || !e.value));
    // A person scrolls to what is further down the page; so does a model told more is there.
    if (!el && /more below the viewport/.test(turn) && (state.scrolls = (state.scrolls ?? 0) + 1) <= 5) return { action: 'scroll', direction: 'down' };
    if (!el) {
      const list = (turn.match(/⟦untrusted data: element list⟧[\s\S]*?⟦\/untrusted data⟧/) ?? [turn])[0];
      state.missed = { step: `${step.action} ${say(step)}`, list };
      return { action: 'done', success: false, answer: `I cannot find ${say(step)} on the page.` };
    }
    state.current = state.next++;
    state.scrolls = 0;
    const { action, text, option } = step;
    if (action === 'type') return { action, element: el.id, text };
    if (action === 'select_option') return { action, element: el.id, option };
    return { action, element: el.id };
  };
}

/**
 * Runs `steps` as the task `task` on `url` in `env` (an agent env whose model answers with
 * `namedStepsNavigator(state)`): answers each approval with `answer` ('approve' or 'deny')
 * and resolves, once the task ends, to `{status, asked: [{step, text}], missed, steps}`
 * (`step`: the index of the step the question came on).
 */
export async function runNamedTask(env, state, { task, url, steps, answer = 'approve', timeout = 60_000 }) {
  Object.assign(state, { steps, next: 0, current: -1, missed: null, scrolls: 0 });
  const asked = [];
  const { ui, panel } = env;
  await countApprovals(panel);
  const shown = () => panel.evaluate(() => window.__tandemApprovals);
  let answered = await shown();
  await ui.startTask(env.tab, task, url);
  for (const t0 = Date.now(); ;) {
    const status = (await ui.status().textContent()) ?? '';
    if (/^(Done|Failed|Cancelled|Paused)/.test(status)) return { status, asked, missed: state.missed, steps: await ui.steps() };
    if ((await shown()) > answered && (await ui.approval().isVisible())) {
      answered++;
      asked.push({ step: state.current, text: ((await panel.locator('#task-confirm-text').textContent()) ?? '').trim() });
      await ui.approval().getByRole('button', { name: answer === 'deny' ? 'Deny' : 'Approve', exact: true }).click();
      continue;
    }
    if (Date.now() - t0 > timeout) throw new Error(`the task "${task}" did not end in ${timeout} ms: ${status}\n${(await ui.steps()).join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Counts in the panel (`window.__tandemApprovals`) each approval question shown: each time
 * the approval box appears or its question changes. Two questions in a row on the same step
 * (the box hidden between them for a moment only) are two.
 */
async function countApprovals(panel) {
  await panel.evaluate(() => {
    if (window.__tandemApprovals != null) return;
    window.__tandemApprovals = 0;
    const box = document.getElementById('task-confirm');
    const text = document.getElementById('task-confirm-text');
    let last = box.hidden ? null : text.textContent;
    new MutationObserver(() => {
      const now = box.hidden ? null : text.textContent;
      if (now !== null && now !== last) window.__tandemApprovals++;
      last = now;
    }).observe(box, { attributes: true, attributeFilter: ['hidden'], subtree: true, childList: true, characterData: true });
  });
}
