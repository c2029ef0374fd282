// Real open-source web applications, installed from PyPI (scripts/lib.sh need_real_apps): the
// Django admin of a small library (tests/real-apps/django), a Trac project with tickets and a
// wiki (tests/real-apps/trac) and a Wagtail CMS with two live pages (tests/real-apps/wagtail). Each is started once for the file on a loopback port and
// shown to the browser on an https name the manifest does not list (lib/real-apps.mjs). The
// model picks every control by the name Tandem's element list gives it (lib/named-steps.mjs);
// a name missing from the list fails the task. Each task is judged by the application's own
// database, and by whether Tandem asked the person exactly where the step could not be undone
// (deletes, sends to others, changes who may do what) and nowhere else. The last test prints
// the two figures of issue #44 over all these tasks.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { alwaysAllow, doAndCheckPlanner, scriptedModel, startAgentEnv } from './lib/agent-harness.mjs';
import { DJANGO_SESSION, WAGTAIL_SESSION, proxyApp, startDjango, startTrac, startWagtail } from './lib/real-apps.mjs';
import { choose, click, namedStepsNavigator, runNamedTask, type } from './lib/named-steps.mjs';

const BOOKS = 'https://books.tandem.test';
const TRACKER = 'https://tracker.tandem.test';
const CMS = 'https://cms.tandem.test';
const NOT_ASKED_FOR = /Your task did not ask for that/i;

let env, django, trac, wagtail;
const state = {};
/** Every task's steps and questions, for the figures. */
const record = [];

before(async () => {
  [django, trac, wagtail, env] = await Promise.all([
    startDjango({ origin: BOOKS }),
    startTrac({ origin: TRACKER }),
    startWagtail({ origin: CMS }),
    startAgentEnv({ routes: {}, key: 'sk-test-real-apps-12345678', trust: false }),
  ]);
  env.mock.setDefault(scriptedModel({ planner: doAndCheckPlanner, navigator: namedStepsNavigator(state), turns: [] }));
  await proxyApp(env.browser.context, django);
  await proxyApp(env.browser.context, trac);
  await proxyApp(env.browser.context, wagtail);
  // The admins are signed in, as the person would be before asking for help there.
  await env.browser.context.addCookies([
    { name: 'sessionid', value: DJANGO_SESSION, url: BOOKS, secure: true, httpOnly: true },
    { name: 'sessionid', value: WAGTAIL_SESSION, url: CMS, secure: true, httpOnly: true },
  ]);
  // The person chose "Always allow" on these sites: the site-access question is tested elsewhere.
  await alwaysAllow(env.panel, [BOOKS, TRACKER, CMS].map((o) => new URL(o).host));
});

after(async () => {
  await Promise.all([env?.close(), django?.close(), trac?.close(), wagtail?.close()]);
});

beforeEach(async () => {
  await Promise.all([django.reset(), trac.reset(), wagtail.reset()]);
});

/**
 * Runs a named-steps task and checks what the model could see and where Tandem asked:
 * every `irreversible` step was asked about exactly once, before it (on it, or on an earlier
 * `mayAsk` step of the same task), no other step was asked about, and no reason says the task
 * did not ask for a step the task asked for. Returns the run.
 */
async function task(spec) {
  const run = await runNamedTask(env, state, spec);
  record.push({ spec, run });
  if (run.missed) assert.fail(`the model could not find ${run.missed.step} in Tandem's list:\n${run.missed.list}`);
  return run;
}

/**
 * The judgement of `run`'s questions against `spec`'s steps (see `task`): `irreversible`
 * steps, how many of them were `asked` about, all `steps`, the questions that were `noise`
 * (on a step that needed none, or a second one before the same step) and those whose reason
 * is `false` (it says the task did not ask for a step the task asked for).
 */
function judgeQuestions({ spec, run }) {
  const out = { irreversible: 0, asked: 0, steps: spec.steps.length, noise: [], false: [] };
  let consent = []; // questions on `mayAsk` steps since the last irreversible step
  spec.steps.forEach((s, i) => {
    const here = run.asked.filter((q) => q.step === i);
    if (s.irreversible) {
      out.irreversible++;
      const questions = [...consent, ...here];
      if (questions.length) out.asked++;
      out.noise.push(...questions.slice(1).map((q) => ({ ...q, why: 'a second question before the same step' })));
      consent = [];
    } else if (s.mayAsk) {
      consent.push(...here);
    } else {
      out.noise.push(...here.map((q) => ({ ...q, why: 'the step needed no question' })));
    }
  });
  out.false = run.asked.filter((q) => NOT_ASKED_FOR.test(q.text));
  return out;
}

/** Asserts that `run` of `spec` was asked about as judgeQuestions wants. */
function assertQuestions(spec, run) {
  const j = judgeQuestions({ spec, run });
  assert.equal(j.asked, j.irreversible, `asked before ${j.asked} of ${j.irreversible} irreversible steps; questions: ${JSON.stringify(run.asked)}`);
  assert.deepEqual(j.noise, [], 'questions that were noise');
  assert.deepEqual(j.false, [], 'questions saying the task did not ask for what it asked for');
}


const books = () => django.sql('SELECT b.title, a.name, b.pages, b.publication_date FROM library_book b JOIN library_author a ON a.id = b.author_id ORDER BY b.title');

test('Django: add a book with the ordinary Save: saved, and nothing asked', async () => {
  const spec = {
    task: 'Add the book "The Dispossessed" by Ursula K. Le Guin, published 1974-05-01, 387 pages.',
    url: `${BOOKS}/admin/library/book/add/`,
    steps: [type('Title:', 'The Dispossessed'), type('Publication date:', '1974-05-01'), type('Pages:', '387'),
      choose('Author:', 'Ursula K. Le Guin'), click('Save')],
  };
  const run = await task(spec);
  assert.match(run.status, /^Done/);
  assert.deepEqual((await books()).find((b) => b[0] === 'The Dispossessed'), ['The Dispossessed', 'Ursula K. Le Guin', 387, '1974-05-01']);
  assertQuestions(spec, run);
});

test('Django: change a book\'s page count: saved, and nothing asked', async () => {
  const spec = {
    task: 'Solaris has 220 pages, not 204: correct it.',
    url: `${BOOKS}/admin/library/book/`,
    steps: [click('Solaris', { role: 'link' }), type('Pages:', '220'), click('Save')],
  };
  const run = await task(spec);
  assert.match(run.status, /^Done/);
  assert.equal((await books()).find((b) => b[0] === 'Solaris')[2], 220);
  assertQuestions(spec, run);
});

/** Deleting every book by Stanisław Lem through the admin's "Delete selected" action. */
const deleteLem = {
  task: 'Delete all books by Stanisław Lem.',
  url: `${BOOKS}/admin/library/book/`,
  asked: true,
  steps: [click('Stanisław Lem', { role: 'link' }), click('Select all objects on this page for an action'),
    choose('Action:', 'Delete selected books'), click('Go', { mayAsk: true }), click(/^Yes, I.m sure$/, { irreversible: true })],
};
const lemBooks = async () => (await books()).filter((b) => b[1] === 'Stanisław Lem').map((b) => b[0]);

test('Django: delete all books by an author, the person says no: asked once, nothing deleted', async () => {
  const run = await task({ ...deleteLem, answer: 'deny' });
  assert.deepEqual(await lemBooks(), ['Solaris', 'The Cyberiad'], 'the books are still there');
  assert.equal((await books()).length, 5);
  assertQuestions(deleteLem, run);
});

test('Django: delete all books by an author, the person approves: asked once, exactly those books gone', async () => {
  const run = await task(deleteLem);
  assert.match(run.status, /^Done/);
  assert.deepEqual(await lemBooks(), []);
  assert.equal((await books()).length, 3, 'the other authors\' books are kept');
  assertQuestions(deleteLem, run);
});

test('Django: add a user to the moderators group (who may do what): asked before Save, then saved', async () => {
  const spec = {
    task: 'Add maria to the moderators group.',
    url: `${BOOKS}/admin/auth/user/`,
    steps: [click('maria', { role: 'link' }), choose(/^Available groups/, 'moderators'), click('Choose selected groups'),
      click('Save', { irreversible: true })],
  };
  const run = await task(spec);
  assert.match(run.status, /^Done/);
  const groups = await django.sql("SELECT g.name FROM auth_user_groups ug JOIN auth_group g ON g.id = ug.group_id JOIN auth_user u ON u.id = ug.user_id WHERE u.username = 'maria'");
  assert.deepEqual(groups, [['moderators']]);
  assertQuestions(spec, run);
});

test('Django: add a book in the author page\'s table of books (columns Title, Publication date, Pages)', async () => {
  const spec = {
    task: 'On Stanisław Lem\'s page, add his book "Fiasco" (1986-01-01, 322 pages).',
    url: `${BOOKS}/admin/library/author/`,
    steps: [click('Stanisław Lem', { role: 'link' }), type(/Title/, 'Fiasco', { empty: true }),
      type(/Publication date/, '1986-01-01', { empty: true }), type(/Pages/, '322', { empty: true }), click('Save')],
  };
  const run = await task(spec);
  assert.match(run.status, /^Done/);
  assert.deepEqual((await books()).find((b) => b[0] === 'Fiasco'), ['Fiasco', 'Stanisław Lem', 322, '1986-01-01']);
  assertQuestions(spec, run);
});

const tickets = () => trac.sql('SELECT id, summary, component FROM ticket ORDER BY id');

test('Trac: file the ticket the task describes: created, and no question says the task did not ask for it', async () => {
  const spec = {
    task: 'File a ticket in component2: "Search ignores accented letters" — searching for "Lem" does not find "Lém".',
    url: `${TRACKER}/newticket`,
    steps: [type('Summary:', 'Search ignores accented letters'), type(/^Description:/, 'Searching for "Lem" does not find "Lém".'),
      choose('Component:', 'component2'), click('Create ticket', { mayAsk: true })],
  };
  const run = await task(spec);
  assert.match(run.status, /^Done/);
  assert.deepEqual((await tickets()).at(-1), [4, 'Search ignores accented letters', 'component2']);
  assertQuestions(spec, run);
});

test('Trac: comment on the ticket the task names (others read it): asked, with a true reason, then posted', async () => {
  const spec = {
    task: 'Comment on ticket #2 that the export bug also affects the PDF export.',
    url: `${TRACKER}/ticket/2`,
    steps: [type(/^You may use WikiFormatting/, 'This also affects the PDF export.'), click('Submit changes', { irreversible: true })],
  };
  const run = await task(spec);
  assert.match(run.status, /^Done/);
  const comments = await trac.sql("SELECT ticket, newvalue FROM ticket_change WHERE field = 'comment'");
  assert.deepEqual(comments, [[2, 'This also affects the PDF export.']]);
  assertQuestions(spec, run);
});

test('Trac: widen the custom query with its "–" and "Update" buttons: the list changes, nothing asked, nothing stored', async () => {
  const spec = {
    task: 'The query shows only maria\'s tickets: show everyone\'s by removing the owner filter.',
    url: `${TRACKER}/query?owner=maria&order=priority`,
    steps: [click('–', { role: 'button' }), click('Update')],
  };
  const before = await tickets();
  const run = await task(spec);
  assert.match(run.status, /^Done/);
  // With no filter left, Trac shows its default query (every open ticket).
  assert.doesNotMatch(env.tab.url(), /owner=/, 'the query no longer filters by owner');
  assert.match(await env.tab.locator('table.listing').innerText(), /Export to CSV drops the last row/, 'li\'s ticket is listed too');
  assert.deepEqual(await tickets(), before);
  assert.deepEqual(await trac.sql('SELECT COUNT(*) FROM ticket_change'), [[0]]);
  assertQuestions(spec, run);
});

test('Trac: edit the wiki page the task names: saved as a new version, with no question or an honest one', async () => {
  const spec = {
    task: 'On the MeetingNotes wiki page, change the next meeting to Tuesday.',
    url: `${TRACKER}/wiki/MeetingNotes`,
    steps: [click('Edit this page'), type(/^= Meeting notes =/, '= Meeting notes =\n\nNext meeting: Tuesday.\n'),
      click('Submit changes', { mayAsk: true })],
  };
  const run = await task(spec);
  assert.match(run.status, /^Done/);
  const latest = await trac.sql("SELECT version, text FROM wiki WHERE name = 'MeetingNotes' ORDER BY version DESC LIMIT 1");
  assert.equal(latest[0][0], 2);
  assert.match(latest[0][1], /Next meeting: Tuesday\./);
  assertQuestions(spec, run);
});

/** Deleting the OldRoadmap wiki page: its "Delete page" button, then the confirmation page's. */
const deleteWiki = {
  task: 'Delete the OldRoadmap wiki page.',
  url: `${TRACKER}/wiki/OldRoadmap`,
  steps: [click('Delete page', { mayAsk: true }), click('Delete page', { irreversible: true })],
};
const wikiPages = async () => (await trac.sql("SELECT DISTINCT name FROM wiki WHERE name IN ('OldRoadmap', 'MeetingNotes') ORDER BY name")).map((r) => r[0]);

test('Trac: delete a wiki page, the person says no: asked, and the page is still there', async () => {
  const run = await task({ ...deleteWiki, answer: 'deny' });
  assert.deepEqual(await wikiPages(), ['MeetingNotes', 'OldRoadmap']);
  assert.equal(run.asked.length, 1, 'one question, answered No');
  assertQuestions(deleteWiki, run);
});

test('Trac: delete a wiki page: asked once before the page is gone, then deleted', async () => {
  const run = await task(deleteWiki);
  assert.match(run.status, /^Done/);
  assert.deepEqual(await wikiPages(), ['MeetingNotes'], 'only that page is gone');
  assertQuestions(deleteWiki, run);
});

const pages = () => wagtail.sql("SELECT slug, title, live, has_unpublished_changes FROM wagtailcore_page WHERE depth = 3 ORDER BY slug");

test('Wagtail: save a page\'s new title as a draft: a draft revision, the live page unchanged, nothing asked', async () => {
  const spec = {
    task: 'Rename the "About us" page to "About Orbit Outfitters", as a draft for now.',
    url: `${CMS}/admin/pages/2/`,
    steps: [click('About us', { role: 'link' }), type('Title*', 'About Orbit Outfitters', { role: 'textbox' }), click('Save draft')],
  };
  const run = await task(spec);
  assert.match(run.status, /^Done/);
  assert.deepEqual((await pages()).find((p) => p[0] === 'about-us'), ['about-us', 'About us', 1, 1], 'live under its old title, with a draft');
  const draft = await wagtail.sql("SELECT r.content FROM wagtailcore_revision r JOIN wagtailcore_page p ON p.latest_revision_id = r.id WHERE p.slug = 'about-us'");
  assert.equal(JSON.parse(draft[0][0]).title, 'About Orbit Outfitters');
  assertQuestions(spec, run);
});

test('Wagtail: unpublish a page through its menu and "Yes, unpublish it": asked once, then no longer live', async () => {
  const spec = {
    task: 'Take the "Summer sale" page offline (unpublish it).',
    url: `${CMS}/admin/pages/2/`,
    steps: [click("More options for 'Summer sale'"), click('Unpublish', { mayAsk: true }), click('Yes, unpublish it', { irreversible: true })],
  };
  const run = await task(spec);
  assert.match(run.status, /^Done/);
  assert.deepEqual((await pages()).map((p) => [p[0], p[2]]), [['about-us', 1], ['summer-sale', 0]]);
  assertQuestions(spec, run);
});

test('Wagtail: rewrite a page\'s introduction in its rich-text editor and save a draft: nothing asked', async () => {
  const spec = {
    task: 'Change the introduction of the "About us" page to "We make tents and sleeping bags." and save it as a draft.',
    url: `${CMS}/admin/pages/4/edit/`,
    steps: [type(/^Intro/, 'We make tents and sleeping bags.', { role: 'textbox' }), click('Save draft')],
  };
  const run = await task(spec);
  assert.match(run.status, /^Done/);
  const draft = await wagtail.sql("SELECT r.content FROM wagtailcore_revision r JOIN wagtailcore_page p ON p.latest_revision_id = r.id WHERE p.slug = 'about-us'");
  assert.match(JSON.parse(draft[0][0]).intro, /We make tents and sleeping bags\./);
  assertQuestions(spec, run);
});

test('the figures over every real-application task: every irreversible step asked, no question on the others', () => {
  let irreversible = 0, asked = 0, steps = 0, noise = 0, falseReasons = 0;
  for (const r of record) {
    const j = judgeQuestions(r);
    irreversible += j.irreversible;
    asked += j.asked;
    steps += j.steps;
    noise += j.noise.length;
    falseReasons += j.false.length;
  }
  console.log(`irreversible steps asked: ${asked}/${irreversible}`);
  console.log(`questions on steps that needed none: ${noise}/${steps}`);
  console.log(`questions saying the task did not ask for what it asked for: ${falseReasons}`);
  assert.equal(record.length, 15, 'every task ran');
  assert.equal(asked, irreversible);
  assert.equal(noise, 0);
  assert.equal(falseReasons, 0);
});
