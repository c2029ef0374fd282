// The small shop the agent tests act on (search, results, product page, cart, pay). The
// arrays passed in record what the site received, for the tests to assert on.

import { page } from './fixtures.mjs';

// Many agent tests import `page` from here, with the shop.
export { page };
export const PRODUCTS = [
  ['red-tote', 'Red tote', 20],
  ['blue-backpack', 'Blue backpack', 35],
  ['blue-sling', 'Blue sling bag', 28],
];

/** Routes for lib/fixtures.mjs `startSite`; `cart` gets each added sku, `paid` each payment. */
export function shopRoutes({ cart, paid = [] }) {
  const products = Object.fromEntries(PRODUCTS.map(([id, name, price]) => [`/p/${id}`, page(name, `<h1>${name}</h1><p>$${price}</p>
    <form action="/cart/add" method="post"><input type="hidden" name="sku" value="${id}"><button>Add to cart</button></form>
    <a href="/">Home</a>`)]));
  return {
    ...products,
    '/': page('Pack & Go', `<h1>Pack &amp; Go</h1>
      <form action="/search" method="get"><input type="search" name="q" aria-label="Search" placeholder="Search bags"><button>Search</button></form>
      <a href="/cart">Cart</a>`),
    '/search': (rec) => {
      const q = String(rec.query.q ?? '').toLowerCase();
      const hits = PRODUCTS.filter(([, name]) => q.split(/\s+/).some((w) => w && name.toLowerCase().includes(w)));
      return page('Results', `<h1>Results for ${q}</h1><ul>${hits.map(([id, name, price]) => `<li><a href="/p/${id}">${name} — $${price}</a></li>`).join('')}</ul><a href="/cart">Cart</a>`);
    },
    '/cart/add': (rec) => {
      const sku = new URLSearchParams(rec.body).get('sku');
      cart.push(sku);
      return { status: 303, headers: { location: '/cart' }, body: '' };
    },
    '/cart': () => page('Your cart', `<h1>Your cart</h1><ul>${cart.map((sku) => {
      const p = PRODUCTS.find(([id]) => id === sku);
      return `<li><a href="/p/${sku}">${p ? p[1] : sku}</a></li>`;
    }).join('')}</ul><form action="/pay" method="post"><button>Pay now</button></form><a href="/">Continue shopping</a>`),
    '/pay': () => { paid.push(Date.now()); return page('Paid', '<h1>Thank you</h1><a href="/">Home</a>'); },
  };
}
