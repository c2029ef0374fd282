// Agent steps under each provider's own structured output (issue 33): the planner's and the
// navigator's requests carry the step's JSON Schema in the form that provider takes, a server
// that refuses it is asked again a rung down without losing or repeating a step, and a model
// that never answers with valid JSON ends the task within a ceiling. The world: the real
// dist/, a newsletter page on an https origin the manifest does not list, and the mock
// server speaking each wire format. Checked on what the server received, what the site
// received and what the task view says.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { lastUserText, startAgentEnv, useMockProvider } from './lib/agent-harness.mjs';
import { useProvider } from './lib/panel.mjs';
import { page } from './lib/shop-site.mjs';

const SITE = 'https://news.tandem.test';
const KEY = 'sk-structured-12345678';
let env, mock, ui, tab, panel;
const subscribed = [];

before(async () => {
  env = await startAgentEnv({
    origin: SITE,
    routes: {
      '/': page('Weekly letter', `<h1>Weekly letter</h1><form action="/subscribe" method="post">
        <input type="hidden" name="list" value="weekly"><button>Subscribe</button></form>`),
      '/subscribe': (rec) => { subscribed.push(rec.body); return page('Subscribed', '<h1>You are subscribed</h1>'); },
    },
    key: KEY,
    onDevice: 'cloud',
    // Ollama accepts the extension only when started with OLLAMA_ORIGINS, as its users do.
    mockOptions: { ollamaOrigins: ['chrome-extension://*'] },
  });
  ({ mock, ui, tab, panel } = env);
});

after(() => env?.close());
beforeEach(() => { mock.reset(); subscribed.length = 0; });

/** The model: the planner plans (and confirms once the page says so), the navigator clicks
 * Subscribe, then says done. */
function answerOf(turn) {
  if (turn.startsWith('ROLE: PLANNER')) return { plan: '1. press Subscribe', complete: /subscribed/i.test(turn) };
  if (/Result of the previous step/.test(turn) && /clicked/.test(turn)) return { action: 'done', success: true, answer: 'Subscribed to the weekly letter.' };
  const id = turn.match(/\[(\d+)\][^\n]*Subscribe/)?.[1];
  return id ? { action: 'click', element: Number(id) } : { action: 'scroll', direction: 'down' };
}

/** Answers as each provider does under its structured output: Anthropic calls the forced
 * tool with the answer as its input; the others write the JSON as text. */
const modelAnswers = (rec) => {
  const answer = answerOf(lastUserText(rec.body));
  const forced = rec.body?.tool_choice?.type === 'tool' ? rec.body.tool_choice.name : null;
  return forced ? { toolCall: { name: forced, arguments: answer } } : { reply: JSON.stringify(answer) };
};

const generations = () => mock.requests.filter((r) => r.provider && !r.path.endsWith('/models') && r.method === 'POST');
const stepOf = (r) => (lastUserText(r.body).startsWith('ROLE: PLANNER') ? 'planner' : 'navigator');

async function runTask(task) {
  await ui.startTask(tab, task, `${SITE}/`);
  await ui.waitStatus(/^(Done|Failed|Cancelled)/, 30_000);
  return (await ui.status().textContent()).trim();
}

// Each provider's form of the schema, read from the request body the server received.
const forms = {
  'OpenAI-compatible': (body, name) => {
    const f = body.response_format;
    assert.equal(f?.type, 'json_schema', JSON.stringify(f));
    assert.equal(f.json_schema.name, name);
    assert.equal(f.json_schema.strict, true);
    const s = f.json_schema.schema;
    assert.equal(s.additionalProperties, false);
    assert.deepEqual([...s.required].sort(), Object.keys(s.properties).sort(), 'every property required');
    if (name === 'navigator_action') assert.deepEqual(s.properties.element.type, ['integer', 'null'], 'optional values nullable');
  },
  Anthropic: (body, name) => {
    assert.deepEqual(body.tool_choice, { type: 'tool', name });
    const tool = body.tools.find((t) => t.name === name);
    assert.ok(tool?.input_schema?.properties, JSON.stringify(body.tools));
  },
  Gemini: (body, name) => {
    assert.equal(body.generationConfig?.responseMimeType, 'application/json');
    const key = name === 'navigator_action' ? 'action' : 'plan';
    assert.ok(body.generationConfig.responseJsonSchema?.properties?.[key], JSON.stringify(body.generationConfig));
  },
  Ollama: (body, name) => {
    const key = name === 'navigator_action' ? 'action' : 'plan';
    assert.ok(body.format?.properties?.[key], JSON.stringify(body.format));
  },
};
const settings = {
  'OpenAI-compatible': { baseUrl: () => `${mock.url}/v1`, model: 'gpt-test' },
  Anthropic: { baseUrl: () => `${mock.url}/v1`, model: 'claude-sonnet-4-5' },
  Gemini: { baseUrl: () => `${mock.url}/v1beta`, model: 'gemini-2.5-flash' },
  Ollama: { baseUrl: () => mock.url, model: 'llama3.2' },
};

for (const [provider, check] of Object.entries(forms)) {
  test(`on ${provider}, the planner and the navigator ask for their schema in ${provider}'s form, and the task is done`, async () => {
    const s = settings[provider];
    await useProvider(panel, { provider, baseUrl: s.baseUrl(), model: s.model, key: KEY });
    mock.setDefault(modelAnswers);
    const status = await runTask('Subscribe me to the weekly letter.');
    assert.match(status, /^Done/, status);
    assert.deepEqual(subscribed, ['list=weekly'], 'the site received one subscription');
    const sent = generations();
    assert.ok(sent.some((r) => stepOf(r) === 'planner') && sent.some((r) => stepOf(r) === 'navigator'));
    for (const r of sent) check(r.body, stepOf(r) === 'planner' ? 'planner_reply' : 'navigator_action');
  });
}

test('an OpenAI-compatible server that refuses json_schema, then json_object, still completes the task, each step once', async () => {
  await useMockProvider(panel, mock, { key: KEY });
  const refused = [];
  // As LM Studio and older vLLM servers answer: a 400 naming the parameter.
  const refuse = (type) => ({
    respond: (res, { cors }) => {
      refused.push(type);
      res.writeHead(400, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify({
        error: { message: `'response_format.type' must be 'text', got '${type}'`, type: 'invalid_request_error', param: 'response_format', code: null },
      }));
    },
  });
  const server = (rec) => {
    const type = rec.body?.response_format?.type;
    return type ? refuse(type) : modelAnswers(rec);
  };
  mock.setDefault(server);
  const status = await runTask('Subscribe me to the weekly letter.');
  assert.match(status, /^Done/, status);
  assert.deepEqual(subscribed, ['list=weekly'], 'one subscription: no step ran twice');
  assert.deepEqual(refused, ['json_schema', 'json_object'], 'each rung refused once, then remembered');
  const answered = generations().filter((r) => r.status === 200);
  assert.ok(answered.every((r) => r.body.response_format === undefined), 'after the ladder: prose JSON only');
  // Each step was answered once: plan, click, done, the planner's confirmation.
  assert.deepEqual(answered.map(stepOf), ['planner', 'navigator', 'navigator', 'planner']);
  // Debug data: every answered step says which rung it was asked under.
  const stored = (await ui.stored()).steps.filter((st) => st.output);
  assert.ok(stored.length >= 3 && stored.every((st) => st.output === 'prose JSON'), JSON.stringify(stored.map((st) => st.output)));
  const steps = await ui.steps();
  assert.equal(steps.filter((s) => /Subscribe/.test(s) && /click/i.test(s)).length, 1, steps.join('\n'));
  // A later task on the same provider and model starts where the server's refusals left it.
  mock.reset();
  mock.setDefault(server);
  refused.length = 0;
  subscribed.length = 0;
  assert.match(await runTask('Subscribe me to the weekly letter again.'), /^Done/);
  assert.deepEqual(refused, [], 'nothing the server refused is sent again');
  assert.deepEqual(subscribed, ['list=weekly']);
});

test('a navigator that never answers valid JSON ends the task within a ceiling, with a sentence', async () => {
  await useMockProvider(panel, mock, { key: KEY });
  mock.setDefault((rec) => {
    const turn = lastUserText(rec.body);
    return turn.startsWith('ROLE: PLANNER')
      ? { reply: JSON.stringify({ plan: '1. press Subscribe', complete: false }) }
      : { reply: 'I would press the Subscribe button now, I think.' };
  });
  const status = await runTask('Subscribe me to the weekly letter.');
  assert.match(status, /^Failed/, status);
  await ui.status().filter({ hasText: /Stopped after 3 failed steps in a row/ }).waitFor();
  await new Promise((r) => setTimeout(r, 500));
  const sent = generations();
  // Three failed steps, each asked once more with what was wrong; one plan.
  assert.deepEqual(sent.map(stepOf), ['planner', 'navigator', 'navigator', 'navigator', 'navigator', 'navigator', 'navigator']);
  assert.deepEqual(subscribed, [], 'nothing was done on the site');
});
