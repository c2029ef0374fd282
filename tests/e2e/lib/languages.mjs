// What the tests of the panel in other languages share: a catalog as chrome.i18n gives it,
// sentences filled in, the check that no English word of some sentences is left, and Settings
// filled in as a person in that language does.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from './browser.mjs';

/** A catalog with Chrome's named placeholders (`$arg1$`) put back as `$1`, as getMessage gives them. */
export async function catalog(lang) {
  const raw = JSON.parse(await readFile(path.join(repoRoot, 'extension', '_locales', lang, 'messages.json'), 'utf8'));
  const out = {};
  for (const [key, { message, placeholders = {} }] of Object.entries(raw)) {
    out[key] = message.replace(/\$(\w+)\$/g, (all, name) => placeholders[name.toLowerCase()]?.content ?? all);
  }
  return out;
}

/** A pattern matching `template` with any words in place of `$1`… (anchored). */
export const pattern = (template) => new RegExp(`^${template.replace(/[.*+?^{}()|[\]\\]/g, '\\$&').replace(/\$\d/g, '[\\s\\S]+')}$`);

/** `template` with `$1`… filled in. */
export const fill = (template, ...args) => template.replace(/\$(\d)/g, (_, n) => args[Number(n) - 1]);

/** The English words of `keys`' sentences that their translations do not also use. */
export function englishWords(en, m, keys) {
  const words = (t) => t.replace(/\$\d/g, ' ').match(/[A-Za-z]{3,}/g) ?? [];
  const out = new Set();
  for (const key of keys) {
    const own = new Set(words(m[key]));
    for (const w of words(en[key])) if (w !== 'Tandem' && !own.has(w)) out.add(w);
  }
  return [...out];
}

export function assertNoEnglish(en, m, keys, text, lang) {
  for (const word of englishWords(en, m, keys)) {
    assert.ok(!new RegExp(`\\b${word}\\b`).test(text), `"${word}" is still shown in ${lang}:\n${text}`);
  }
}

/**
 * Settings as a person in that language fills them (the first run opens them). `noTools`:
 * there is no tool provider, and the Tools part says so.
 */
export async function useMock(panel, m, mock, { noTools = true } = {}) {
  const settings = panel.getByRole('region', { name: m.settings });
  await settings.waitFor();
  // The Tools part says there are no tool providers yet, in that language.
  if (noTools) await settings.locator('#tools-hint').filter({ hasText: m.noToolProvidersYetExtensionsThat }).waitFor({ timeout: 5_000 });
  await panel.getByLabel(m.provider, { exact: true }).selectOption({ label: 'OpenAI-compatible' });
  await panel.getByLabel(m.baseUrl).fill(`${mock.url}/v1`);
  await panel.getByLabel(m.model, { exact: true }).fill('gpt-test');
  await panel.getByLabel(m.apiKey).fill('sk-test-languages-12345678');
  await settings.getByRole('button', { name: m.save, exact: true }).click();
  await settings.waitFor({ state: 'hidden' });
  // The toast that says so is the panel's own sentence, in that language too.
  const toast = panel.getByRole('status', { name: m.settingsStatus, exact: true });
  assert.equal((await toast.innerText()).trim(), m.settingsSaved);
}


/** Opens `url` in a tab of its own, brings it to the front and starts `task` there from the
 * panel's Task mode, every control found by its name in that language. */
export async function startTask(browser, panel, m, url, task) {
  const tab = await browser.context.newPage();
  await tab.goto(url);
  await tab.bringToFront();
  await panel.getByRole('tab', { name: m.task, exact: true }).click();
  await panel.getByRole('textbox', { name: m.task, exact: true }).fill(task);
  await panel.getByRole('button', { name: m.startTask, exact: true }).click();
  return tab;
}
