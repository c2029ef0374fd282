// The scripted model of the agent tests: it reads the element list in the prompt it gets
// and picks elements BY THEIR VISIBLE TEXT, so a wrong map or a wrong id fails the test.
// The functions are self-contained (they use only each other) so that a test can also
// install them in the service worker as the fake LanguageModel's `reply`
// (see `shopperSource`): the worker's CSP forbids eval, but CDP's evaluate of a string does not.

/** `[n] role "name"` lines of the element list in `turn`. */
export function elements(turn) {
  return [...turn.matchAll(/^\[(\d+)\]\*? (\S+) "([^"]*)"/gm)].map((m) => ({ id: Number(m[1]), role: m[2], name: m[3] }));
}

export function find(els, pred) {
  return els.find(pred);
}

/** The page URL the turn's element list names. */
export function urlOf(turn) {
  return (turn.match(/^url: (.*)$/m) ?? [])[1] ?? '';
}

/** The shop shopper: search, open the blue backpack, add it, check the cart. */
export function shopper(turn) {
  const els = elements(turn);
  if (urlOf(turn).endsWith('/cart') && find(els, (e) => e.name === 'Blue backpack')) {
    return { action: 'done', success: true, answer: 'The blue backpack is in the cart.' };
  }
  const add = find(els, (e) => e.name === 'Add to cart');
  if (add && /Blue backpack/.test(turn)) return { action: 'click', element: add.id };
  const product = find(els, (e) => e.role === 'link' && /^Blue backpack/.test(e.name));
  if (product) return { action: 'click', element: product.id };
  const search = find(els, (e) => e.name === 'Search' && e.role !== 'button');
  if (search) return { action: 'type', element: search.id, text: 'blue backpack', submit: true };
  return { action: 'done', success: false, answer: 'lost' };
}

/** The planner's answer to a `ROLE: PLANNER` turn. */
export function planner(turn) {
  return { plan: '1. find the item 2. act on it 3. check', complete: /navigator says the task is done/.test(turn) };
}

/** Source text defining `elements`, `find`, `urlOf`, `shopper` and `planner`, to evaluate elsewhere. */
export const shopperSource = [elements, find, urlOf, shopper, planner].map(String).join('\n');
