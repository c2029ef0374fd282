// Clicks that land where a person's would, and an element list of what a person can reach:
// a tab strip whose `li[role=tab]` wraps the link that does the work, an autocomplete whose
// items (not the list) select, a button a cookie banner comes to cover between the agent's
// look and its act, a click whose effects come in waves, a link to a page that loads its
// content after its load event, and a click that changes nothing.
// The pages are served on an https origin the manifest does not list (lib/fixtures.mjs
// routeSite), trusted up front so that the site question does not interrupt. Each test
// asserts what the page saw (requests the fixture site received, page state read with
// tab.evaluate), then what the timeline says. The scripted model picks elements by their
// visible text, as in agent-pages.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { navigatorSuite } from './lib/suites.mjs';
import { page, text } from './lib/fixtures.mjs';
import { elements } from './lib/scripted-shopper.mjs';

const KEY = 'sk-test-agent-clicks-1234';
let site, tab, ui;


const routes = {
  // The tabs switch in the link's own click handler (not by following its href): a click
  // delivered to the `li` does nothing, as on the third-party page this reproduces.
  '/product': page('Trail shoe', `<h1>Trail shoe</h1>
    <style>.tabs{display:flex;gap:8px;list-style:none;padding:0}.tabs li{padding:6px}.tabs a{display:block;padding:4px 10px}</style>
    <ul class="tabs" role="tablist">
      <li role="tab" aria-selected="true"><a href="#" data-tab="details">Details</a></li>
      <li role="tab" aria-selected="false"><a href="#" data-tab="reviews">Reviews</a></li>
    </ul>
    <section id="details">Light and grippy.</section>
    <section id="reviews" hidden>4.6 stars from 212 runners.</section>
    <script>
      for (const a of document.querySelectorAll('[data-tab]')) {
        a.addEventListener('click', (e) => {
          e.preventDefault();
          const name = a.dataset.tab;
          fetch('/tab?name=' + name);
          for (const s of document.querySelectorAll('section')) s.hidden = s.id !== name;
          for (const li of document.querySelectorAll('[role=tab]')) li.setAttribute('aria-selected', String(li.contains(a)));
        });
      }
    </script>`),
  '/tab': () => text('ok'),

  // Suggestions come from the server; the list has the pointer cursor and one delegated
  // handler that reads which item was hit. It closes shortly after the field loses focus,
  // as such lists do.
  '/trip': page('Plan a trip', `<h1>Plan a trip</h1>
    <style>#suggestions{cursor:pointer;list-style:none;margin:0;padding:0;width:220px;border:1px solid #999}#suggestions li{padding:4px}</style>
    <label>City <input id="city" autocomplete="off"></label>
    <ul id="suggestions" hidden></ul>
    <p id="chosen"></p>
    <script>
      const city = document.getElementById('city');
      const list = document.getElementById('suggestions');
      // The suggestions come from the page's own list, at once: one from a server would make
      // "N elements appeared" depend on the round trip beating the watch's 80 ms.
      const cities = ['Paris', 'Parma', 'Parla'];
      city.addEventListener('input', () => {
        const q = city.value.toLowerCase();
        const names = cities.filter((c) => q && c.toLowerCase().startsWith(q));
        list.replaceChildren(...names.map((n) => Object.assign(document.createElement('li'), { textContent: n })));
        list.hidden = names.length === 0;
      });
      city.addEventListener('blur', () => setTimeout(() => { list.hidden = true; }, 200));
      list.addEventListener('click', (e) => {
        const item = e.target.closest('li');
        if (!item) return;
        city.value = item.textContent;
        document.getElementById('chosen').textContent = 'Trip to ' + item.textContent;
        fetch('/choose?city=' + encodeURIComponent(item.textContent));
      });
    </script>`),
  '/choose': () => text('ok'),

  // A consent banner the page shows on demand (the test shows it between the agent's look
  // and its act); it covers the fixed "Add to cart" button until accepted.
  '/offer': page('Offer', `<h1>Today only</h1><p>Trail shoes, 20% off.</p>
    <style>#add{position:fixed;left:24px;bottom:40px}#banner{position:fixed;left:0;right:0;bottom:0;height:140px;background:#fff;border-top:2px solid #333;padding:12px}</style>
    <button id="add">Add to cart</button>
    <script>
      window.addClicks = 0;
      document.getElementById('add').addEventListener('click', () => { window.addClicks++; fetch('/add'); });
      window.showBanner = () => {
        const b = document.createElement('div');
        b.id = 'banner';
        b.setAttribute('role', 'dialog');
        b.setAttribute('aria-label', 'Cookie consent');
        b.innerHTML = 'We use cookies. <button>Accept cookies</button>';
        b.querySelector('button').addEventListener('click', () => { fetch('/consent'); b.remove(); });
        document.body.append(b);
      };
    </script>`),
  '/add': () => text('ok'),
  '/consent': () => text('ok'),

  // Buttons whose answer comes from the server a moment later, while the page shows it is
  // working: a status region that turns aria-busy, a spinner (a CSS animation), a progress
  // bar without a value (no animation), and such a bar kept hidden in the page and shown.
  '/stock': page('Trail shoe stock', `<h1>Trail shoe</h1>
    <style>@keyframes spin{to{transform:rotate(360deg)}}.spinner{width:16px;height:16px;border:3px solid #999;border-top-color:#333;border-radius:50%;animation:spin .8s linear infinite}</style>
    <button id="check">Check stock</button> <p id="status" aria-live="polite"></p>
    <button id="load">Load reviews</button> <div id="reviews"></div>
    <button id="delivery">Check delivery</button> <div id="when"></div>
    <button id="returns">Check returns</button> <div role="progressbar" aria-label="Checking returns" id="returning" hidden></div> <p id="policy"></p>
    <button id="warranty">Check warranty</button> <div id="cover"></div>
    <script>
      const later = (f, ms = 300) => fetch('/slow-answer').then(() => setTimeout(f, ms));
      document.getElementById('check').addEventListener('click', () => {
        const status = document.getElementById('status');
        status.setAttribute('aria-busy', 'true');
        later(() => {
          status.innerHTML = '3 in stock <button>Reserve one</button>';
          status.setAttribute('aria-busy', 'false');
        });
      });
      document.getElementById('load').addEventListener('click', () => {
        const reviews = document.getElementById('reviews');
        reviews.innerHTML = '<div class="spinner" role="img" aria-label="Loading"></div>';
        later(() => { reviews.innerHTML = '<button>Read all 212 reviews</button>'; });
      });
      document.getElementById('delivery').addEventListener('click', () => {
        const when = document.getElementById('when');
        when.innerHTML = '<div role="progressbar" aria-label="Checking delivery"></div>';
        later(() => { when.innerHTML = 'By Friday <button>Choose delivery</button>'; });
      });
      document.getElementById('returns').addEventListener('click', () => {
        const bar = document.getElementById('returning');
        bar.hidden = false;
        later(() => {
          bar.hidden = true;
          document.getElementById('policy').innerHTML = '30 days <button>Read the returns policy</button>';
        });
      });
      // A slower server: the answer comes over a second after the click, behind a progress bar
      // (1,050 ms after the server's response, which comes through the route first).
      document.getElementById('warranty').addEventListener('click', () => {
        const cover = document.getElementById('cover');
        cover.innerHTML = '<div role="progressbar" aria-label="Checking the warranty"></div>';
        later(() => { cover.innerHTML = '2 years <button>Register the warranty</button>'; }, 1050);
      });
    </script>`),
  '/slow-answer': () => text('ok'),

  // A menu whose items come in three waves: one at once, one 20 ms later, one 45 ms later,
  // with nothing showing the page is busy. The driver looks at the page while it watches the
  // click's effects; a look taken between two waves must not be the one the model gets.
  // (Waves 25 ms apart, inside the watch's 60 ms of quiet even when a loaded machine delays
  // the page's timers: at 30 and 70 ms the last once came too late in a full run.)
  '/waves': page('Saved searches', `<h1>Saved searches</h1>
    <button id="open">Show saved searches</button> <ul id="menu"></ul>
    <script>
      const add = (name) => { const li = document.createElement('li'); li.innerHTML = '<button>' + name + '</button>'; document.getElementById('menu').append(li); };
      document.getElementById('open').addEventListener('click', () => {
        add('Trail shoes under $100');
        setTimeout(() => add('Rain jackets'), 20);
        setTimeout(() => add('Headlamps'), 45);
      });
    </script>`),

  // A link to a page that renders after its load event: it shows a spinner (an indeterminate
  // progress bar, in a region marked busy) while it fetches its content, which the server
  // answers after 600 ms; the DOM does not change meanwhile.
  '/reports': page('Reports', `<h1>Reports</h1><a href="/report">Open the Q3 report</a>`),
  '/report': page('Q3 report', `<h1>Q3 report</h1>
    <main id="report" aria-busy="true"><div role="progressbar" aria-label="Loading the report"></div></main>
    <script>
      fetch('/report-data').then((r) => r.text()).then((t) => {
        const main = document.getElementById('report');
        main.innerHTML = '<p>' + t + '</p><button>Download the Q3 report</button>';
        main.setAttribute('aria-busy', 'false');
      });
    </script>`),
  '/report-data': async () => {
    await new Promise((r) => setTimeout(r, 600));
    return text('Revenue grew 12%.');
  },

  // A button nothing listens to. The page notes whether Tandem's highlight (a box in a
  // closed shadow root, its host an aria-hidden div under <html>) is up when the click lands.
  '/inert': page('Newsletter', `<h1>Newsletter</h1><p>Sign-ups are closed.</p><button type="button">Subscribe</button>
    <script>
      window.seen = [];
      window.markShown = () => [...document.documentElement.children].some((c) => c.tagName === 'DIV' && c.getAttribute('aria-hidden') === 'true');
      document.addEventListener('click', (e) => window.seen.push([e.target.textContent, window.markShown()]), true);
    </script>`),
};

let navigator = () => ({ action: 'done', success: false, answer: 'no script' });
const { navigatorTurns, paths } = navigatorSuite({ routes, key: KEY, navigator: (turn) => navigator(turn), ready: (env) => ({ site, tab, ui } = env) });

test('a tab strip whose li[role=tab] wraps the link: the link is listed and clicked, and the tab switches', async () => {
  navigator = (turn) => {
    if (paths('/tab').length) return { action: 'done', success: true, answer: 'Showing the reviews.' };
    const reviews = elements(turn).find((e) => e.name === 'Reviews');
    return reviews ? { action: 'click', element: reviews.id } : { action: 'done', success: false, answer: 'no Reviews' };
  };
  await ui.startTask(tab, 'Show the reviews', site.url + '/product');
  await ui.waitStatus(/^(Done|Failed)/);

  // What the page saw: the link's handler ran once and switched the tab.
  assert.deepEqual(paths('/tab').map((r) => r.query.name), ['reviews']);
  assert.deepEqual(await tab.evaluate(() => ({
    reviews: !document.getElementById('reviews').hidden,
    selected: [...document.querySelectorAll('[role=tab]')].map((li) => li.getAttribute('aria-selected')),
  })), { reviews: true, selected: ['false', 'true'] });

  // One "Reviews" line, the link, standing for its tab.
  const first = navigatorTurns()[0];
  const lines = first.split('\n').filter((l) => /"Reviews"/.test(l));
  assert.equal(lines.length, 1, first);
  assert.match(lines[0], /^\[\d+\] link "Reviews".*\(in a tab\)/);
  const s = await ui.steps();
  assert.ok(s.some((x) => /"click".*link "Reviews".*✓ clicked; /.test(x) && !/no visible change/.test(x)), s.join('\n'));
  assert.match(await ui.status().textContent(), /^Done/);
});

test('an autocomplete whose items select: typing shows them, the chosen item (not the list) is clicked', async () => {
  navigator = (turn) => {
    const els = elements(turn);
    if (paths('/choose').length) return { action: 'done', success: true, answer: 'Parma chosen.' };
    const parma = els.find((e) => e.name === 'Parma');
    if (parma) return { action: 'click', element: parma.id };
    const city = els.find((e) => e.name === 'City');
    return city ? { action: 'type', element: city.id, text: 'Par' } : { action: 'done', success: false, answer: 'no City' };
  };
  await ui.startTask(tab, 'Choose Parma as the city', site.url + '/trip');
  await ui.waitStatus(/^(Done|Failed)/);

  assert.deepEqual(paths('/choose').map((r) => r.query.city), ['Parma'], 'the Parma item was hit, not the list');
  assert.deepEqual(await tab.evaluate(() => [document.getElementById('city').value, document.getElementById('chosen').textContent]),
    ['Parma', 'Trip to Parma']);

  // The items were listed one by one, and the list itself was not.
  const listing = navigatorTurns().find((t) => /"Parma"/.test(t));
  assert.ok(listing, navigatorTurns().join('\n---\n'));
  for (const city of ['Paris', 'Parma', 'Parla']) assert.match(listing, new RegExp(`^\\[\\d+\\]\\*? listitem "${city}"`, 'm'));
  assert.doesNotMatch(listing, /"Paris Parma Parla"/);
  const s = await ui.steps();
  assert.ok(s.some((x) => /"type".*"City".*✓ typed; \d+ elements appeared/.test(x)), s.join('\n'));
  assert.ok(s.some((x) => /"click".*"Parma".*✓ clicked; .*another field's value changed/.test(x)), s.join('\n'));
});

test('a button a cookie banner covers: reported covered, not clicked; the banner is closed, then the button is clicked', async () => {
  let bannerShown = false;
  navigator = async (turn) => {
    const els = elements(turn);
    if (paths('/add').length) return { action: 'done', success: true, answer: 'Added to the cart.' };
    const accept = els.find((e) => e.name === 'Accept cookies');
    if (accept) return { action: 'click', element: accept.id };
    const add = els.find((e) => e.name === 'Add to cart');
    if (!add) return { action: 'done', success: false, answer: 'no Add to cart' };
    if (!bannerShown) {
      // The banner arrives between the agent's look and its act, as consent banners do.
      await tab.evaluate(() => window.showBanner());
      bannerShown = true;
    }
    return { action: 'click', element: add.id };
  };
  await ui.startTask(tab, 'Add the offer to the cart', site.url + '/offer');
  await ui.waitStatus(/^(Done|Failed)/);

  // What the page saw: no click reached the button while it was covered, the banner was
  // accepted, then exactly one click on the button.
  const order = site.requests.map((r) => r.path).filter((p) => p === '/add' || p === '/consent');
  assert.deepEqual(order, ['/consent', '/add']);
  assert.equal(await tab.evaluate(() => window.addClicks), 1);
  assert.equal(await tab.evaluate(() => document.getElementById('banner')), null);

  const s = await ui.steps();
  const covered = s.find((x) => /"click".*button "Add to cart".*✗ covered by a dialog/.test(x));
  assert.ok(covered, s.join('\n'));
  assert.match(covered, /Cookie consent/);
  // The navigator heard it as a failure, and the list it then got marked the covered
  // button covered, by what, and said something covers it.
  const after = navigatorTurns().find((t) => /failed: covered by a dialog/.test(t));
  assert.ok(after, navigatorTurns().join('\n---\n'));
  assert.match(after, /^\[\d+\]\*? button "Add to cart" covered by "Cookie consent"/m);
  assert.match(after, /1 element in view is under something else/);
  assert.ok(s.some((x) => /"click".*button "Add to cart".*✓ clicked/.test(x)), s.join('\n'));
  assert.match(await ui.status().textContent(), /^Done/);
});

test('a click whose effects come in waves: the next look has all of them', async () => {
  const SEARCHES = ['Trail shoes under $100', 'Rain jackets', 'Headlamps'];
  navigator = (turn) => {
    const names = elements(turn).map((e) => e.name);
    if (!/Result of the previous step/.test(turn)) return { action: 'click', element: elements(turn).find((e) => e.name === 'Show saved searches').id };
    const seen = SEARCHES.filter((n) => names.includes(n));
    return seen.length === SEARCHES.length
      ? { action: 'done', success: true, answer: seen.join('; ') }
      : { action: 'done', success: false, answer: `only saw: ${seen.join('; ')}` };
  };
  await ui.startTask(tab, 'List my saved searches', site.url + '/waves');
  await ui.waitStatus(/^(Done|Failed)/);
  // The page has the three; the look the model answered after the click had them too.
  assert.deepEqual(await tab.evaluate(() => [...document.querySelectorAll('#menu button')].map((b) => b.textContent)), SEARCHES);
  const after = navigatorTurns().find((t) => /Result of the previous step/.test(t));
  // (What the step's result counts depends on the watch's timing on a loaded machine; what
  // the model saw must not.)
  assert.deepEqual(SEARCHES.filter((n) => !elements(after).some((e) => e.name === n)), [], after);
  assert.match(await ui.status().textContent(), /^Done/, navigatorTurns().join('\n---\n'));
});

test('a link to a page that loads its content after the load event: the next look has the content, not the spinner', async () => {
  navigator = (turn) => {
    const els = elements(turn);
    const named = (name) => els.find((e) => e.name === name);
    if (named('Open the Q3 report')) return { action: 'click', element: named('Open the Q3 report').id };
    if (named('Download the Q3 report')) return { action: 'done', success: true, answer: 'The report is there.' };
    return { action: 'done', success: false, answer: 'the report page showed no report' };
  };
  await ui.startTask(tab, 'Open the Q3 report', site.url + '/reports');
  await ui.waitStatus(/^(Done|Failed)/);
  assert.match(tab.url(), /\/report$/);
  assert.equal(paths('/report-data').length, 1);
  // The look after the click was of the loaded report: the model answered Done at once.
  const after = navigatorTurns().find((t) => /Result of the previous step/.test(t));
  assert.match(after, /button "Download the Q3 report"/, after);
  assert.match(await ui.status().textContent(), /^Done/, navigatorTurns().join('\n---\n'));
});

test('a click that changes nothing is delivered and reported as "no visible change"', async () => {
  let clicked = false;
  navigator = (turn) => {
    if (clicked) return { action: 'done', success: false, answer: 'Subscribing did nothing.' };
    clicked = true;
    const subscribe = elements(turn).find((e) => e.name === 'Subscribe');
    return { action: 'click', element: subscribe.id };
  };
  await ui.startTask(tab, 'Subscribe to the newsletter', site.url + '/inert');
  await ui.waitStatus(/^(Done|Failed)/);

  // The page got the click, on the button, with the highlight shown (a person sees what
  // Tandem acts on), and nothing else happened; the highlight goes away by itself.
  assert.deepEqual(await tab.evaluate(() => window.seen), [['Subscribe', true]]);
  await tab.waitForFunction(() => !window.markShown(), null, { timeout: 5000 });
  assert.match(tab.url(), /\/inert$/);
  const s = await ui.steps();
  assert.ok(s.some((x) => /"click".*button "Subscribe".*clicked, but no visible change/.test(x)), s.join('\n'));
  // The next navigator turn carries it, so the model can react.
  assert.ok(navigatorTurns().some((t) => /Result of the previous step: done: clicked, but no visible change/.test(t)),
    navigatorTurns().join('\n---\n'));
});

test('an answer that comes a moment after the click, while the page shows it is working, is waited for and reported', async () => {
  // Each click's answer must be in the look right after it: a step later is too late.
  let asked = null;
  navigator = (turn) => {
    const els = elements(turn);
    const named = (name) => els.find((e) => e.name === name);
    const answers = {
      'Check stock': 'Reserve one',
      'Load reviews': 'Read all 212 reviews',
      'Check delivery': 'Choose delivery',
      'Check returns': 'Read the returns policy',
      'Check warranty': 'Register the warranty',
    };
    if (asked && !named(answers[asked])) return { action: 'done', success: false, answer: `the answer to ${asked} was not there yet` };
    const next = Object.keys(answers).find((b) => !named(answers[b]));
    if (!next) return { action: 'done', success: true, answer: '3 in stock; 212 reviews; by Friday; 30 days to return; 2 years of warranty.' };
    asked = next;
    return { action: 'click', element: named(next).id };
  };
  await ui.startTask(tab, 'Check the stock, the reviews, the delivery, the returns and the warranty', site.url + '/stock');
  await ui.waitStatus(/^(Done|Failed)/);

  // What the page shows: the five answers arrived.
  assert.deepEqual(await tab.evaluate(() => [...document.querySelectorAll('#status button, #reviews button, #when button, #policy button, #cover button')].map((b) => b.textContent)),
    ['Reserve one', 'Read all 212 reviews', 'Choose delivery', 'Read the returns policy', 'Register the warranty']);
  // Each click's step waited for its answer: the look after it already had the answer (an
  // aria-busy region, a spinner, a progress bar, then a progress bar shown kept the watch
  // open; the last one for over a second), and its result says what came.
  const s = await ui.steps();
  assert.ok(s.some((x) => /"click".*button "Check stock".*✓ clicked; /.test(x) && !/no visible change/.test(x)), s.join('\n'));
  assert.ok(s.some((x) => /"click".*button "Load reviews".*✓ clicked; /.test(x)), s.join('\n'));
  assert.ok(s.some((x) => /"click".*button "Check delivery".*✓ clicked; /.test(x)), s.join('\n'));
  assert.ok(s.some((x) => /"click".*button "Check returns".*✓ clicked; /.test(x)), s.join('\n'));
  assert.ok(s.some((x) => /"click".*button "Check warranty".*✓ clicked; /.test(x)), s.join('\n'));
  assert.equal(paths('/slow-answer').length, 5);
  assert.match(await ui.status().textContent(), /^Done/, navigatorTurns().join('\n---\n'));
});
