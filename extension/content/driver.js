// Tandem's in-page DOM driver. Plain JS on purpose: wasm cannot be instantiated in content
// scripts on pages with a strict CSP, so every decision is made in Rust in the service worker
// and this file only observes (snapshot) and acts (act). The Rust mirror of what it returns is
// crates/core/src/agent/snapshot.rs: change both together.
//
// Injected with chrome.scripting.executeScript({files: ['content/driver.js'], allFrames: true})
// into the extension's isolated world, so the page can neither see nor patch it. The only side
// effect is defining globalThis.__tandemDriver, and injecting twice keeps the first instance
// so that handles handed out earlier stay valid.
(() => {
  'use strict';

  const VERSION = 9;
  const existing = globalThis.__tandemDriver;
  if (existing && existing.version === VERSION) return;

  // Handles are "<docId>.<n>": the random document id makes a handle from a previous page
  // (a new driver instance counting from 1 again) unusable instead of silently meaning another
  // element. The same DOM node keeps its handle across snapshots, which the Rust side uses as
  // the strongest evidence that an element is still the same one.
  const docId = Math.random().toString(36).slice(2, 8) + Date.now().toString(36).slice(-4);
  let counter = 0;
  const handleOf = new WeakMap(); // Element -> handle
  const elementOf = new Map(); // handle -> WeakRef<Element>
  const ownNodes = new WeakSet(); // highlight overlays: never reported

  const DEFAULTS = {
    maxElements: 1500, // candidates reported; beyond that only those near the viewport, and `truncated` is set
    maxNodes: 30000, // elements visited; bounds the cost on huge pages
    maxText: 0, // characters of page text (0 = none)
    includeHidden: false, // also report candidates that are not rendered
    describeAll: false, // describe every candidate in full, far ones too (see DESCRIBED_BELOW)
  };
  // On a long page most candidates are far from the viewport, where the worker lists none of them:
  // it lists the viewport, then at most 25 elements below it and 10 above it (document order,
  // nearest first), and counts the rest by kind (crates/core element_map.rs). Those far ones are
  // reported briefly (handle, tag, role, box, a field's group, `brief`), which halves the snapshot
  // of a 2,000-element page; described in full are those in the viewport, the first
  // DESCRIBED_BELOW below it and the last DESCRIBED_ABOVE above it (room for the links the list
  // folds together and the holders it skips), and every element of a form, which the worker's
  // guards read as a whole. The worker asks for `describeAll` before it acts on a brief element
  // and while it replays a workflow. Only the top frame's driver does this: a cross-origin frame's
  // own viewport is not the tab's.
  const DESCRIBED_BELOW = 60;
  const DESCRIBED_ABOVE = 30;
  const NAME_CAP = 120;
  const TEXT_CAP = 200;
  const CONTEXT_CAP = 100;
  const ATTR_CAP = 200;
  const OPTIONS_CAP = 50;
  const GROUP_CAP = 40;
  const COVER_CAP = 40;
  // Where a person's pointer may land on an element, as fractions of its visible box: the
  // centre first, then the middles of its quarters, so that an element whose centre is under
  // a sticky header or a badge still counts as reachable.
  const SPOTS = [[0.5, 0.5], [0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]];
  // How long `act` watches the page for the action's effects: a change ends the watch once
  // the page has been quiet for QUIET_MS; with no change at all it ends after NO_CHANGE_MS
  // (a static page answers a click within a frame or two), unless the page shows it is
  // working on it (an aria-busy region, an animation the action started), which waits for
  // the first change; a page that never stops changing (an animation) is cut off at
  // MAX_WATCH_MS, and a page that shows it is still working on the action (a server answering
  // behind a spinner) at MAX_BUSY_MS, as long as the wait after a navigation.
  // NO_CHANGE_MS is five frames at 60 Hz: what a handler or a framework's render does in
  // answer comes within one or two. It was 100; at 80 the next step's look (taken inside the
  // watch) rather than the wait ends the watch on a large page. A change that comes later
  // still cannot mislead an action: the look is refused once the page changed after it.
  const QUIET_MS = 60;
  const NO_CHANGE_MS = 80;
  const MAX_WATCH_MS = 1000;
  const MAX_BUSY_MS = 2000;
  const POLL_MS = 20;
  // Display types whose transform the snapshot reads (see noteLayer).
  const TRANSFORMABLE = (display) => display !== 'inline' && display !== 'contents' && !display.startsWith('table');
  // Lists whose items are what a click lands on: an `li` of such a list is a target of its
  // own even when it inherits the list's pointer cursor instead of starting one.
  const LIST_TAGS = new Set(['UL', 'OL', 'MENU']);
  const LIST_ROLES = new Set(['list', 'listbox', 'menu', 'menubar', 'tablist', 'tree', 'grid', 'radiogroup']);
  const GROUP_ROLES = new Set(['group', 'region', 'dialog', 'alertdialog', 'form', 'search', 'radiogroup']);
  const GROUP_TAGS = new Set(['FORM', 'SECTION', 'DIALOG', 'FIELDSET']);

  const SKIP_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK']);
  const BLOCK_TAGS = new Set([
    'ADDRESS', 'ARTICLE', 'ASIDE', 'BLOCKQUOTE', 'BR', 'BUTTON', 'DD', 'DIV', 'DL', 'DT',
    'FIELDSET', 'FIGCAPTION', 'FIGURE', 'FOOTER', 'FORM', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6',
    'HEADER', 'HR', 'LI', 'MAIN', 'NAV', 'OL', 'OPTION', 'P', 'PRE', 'SECTION', 'SELECT',
    'TABLE', 'TD', 'TH', 'TR', 'UL',
  ]);
  const INTERACTIVE_ROLES = new Set([
    'button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'combobox', 'textbox', 'searchbox', 'slider', 'spinbutton',
    'treeitem', 'listbox', 'gridcell',
  ]);
  // Roles whose accessible name may come from their content (WAI-ARIA "name from content").
  const NAME_FROM_CONTENT = new Set([
    'button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'treeitem', 'heading', 'cell', 'gridcell', 'columnheader',
    'rowheader', 'tooltip', 'summary',
  ]);
  const KEY_ATTRS = new Set([
    'id', 'name', 'type', 'placeholder', 'href', 'autocomplete', 'title', 'alt', 'for',
    'inputmode', 'pattern', 'maxlength', 'min', 'max', 'step', 'multiple', 'required', 'readonly',
  ]);
  const SVG_NS = 'http://www.w3.org/2000/svg';
  // Set by content/listeners.js (the page's MAIN world) on elements that got a pointer or key
  // listener from script, or hold a handler a framework delegates to its root (React's
  // `__reactProps$…`), which that world marks when asked with LISTENER_SCAN on a document.
  const LISTENER_MARK = 'data-tandem-on';
  const LISTENER_SCAN = 'tandem-scan';
  // Asks the page's world to mark what holds delegated handlers, before the walk reads marks.
  // Synchronous: the MAIN world's listener runs inside dispatchEvent.
  const askMarks = (doc) => {
    try {
      doc.dispatchEvent(new Event(LISTENER_SCAN));
    } catch (_) { /* a document without listeners.js: its listeners are unmarked */ }
  };
  // SVG shapes a person can point at: listed with their shape, colour and size.
  const SHAPES = new Set(['circle', 'rect', 'ellipse', 'polygon', 'path', 'line', 'polyline']);
  // What an icon-only control is called when nothing else names it: the word of its icon
  // font's class (`fa-trash`, `bi-star-fill`, `icon-close`), or a class that is the word.
  const ICON_CLASS = /^(?:fa[srlbdk]?|fa-(?:solid|regular|light|brands)|bi|icon|icons|glyphicon|mdi|ti|la[srb]?|ion(?:-md|-ios)?|feather|lucide|octicon|gg|ri|bx[sl]?|codicon|el-icon|anticon|oi|typcn|wi|zmdi|pe-7s|si|fi|ph)-([a-z][a-z0-9-]*)$/;
  const ICON_NOISE = /^(solid|regular|light|brands|duotone|thin|lg|sm|xs|xl|[1-9]x|fw|fixed-width|spin|pulse|border|inverse|stack|flip.*|rotate.*|pull-.*|icon|icons|fill|filled|outline|outlined|round|rounded|sharp|line|alt|o)$/;
  const ICON_SUFFIX = /-(fill|filled|o|outline|outlined|line|alt|solid|round|rounded|sharp|sign|circle|square|[0-9]+)$/;
  const ICON_WORDS = new Set([
    'trash', 'delete', 'remove', 'close', 'star', 'edit', 'pencil', 'search', 'menu', 'reply',
    'forward', 'archive', 'heart', 'like', 'share', 'settings', 'gear', 'cog', 'bold', 'italic',
    'underline', 'plus', 'minus', 'add', 'download', 'upload', 'print', 'refresh', 'play', 'pause',
    'stop', 'next', 'prev', 'previous', 'back', 'home', 'user', 'bell', 'cart', 'check', 'copy',
    'more', 'filter', 'sort', 'save', 'send', 'attach', 'flag', 'pin', 'bookmark', 'lock', 'unlock',
    'info', 'help', 'calendar', 'mail', 'email', 'spam', 'undo', 'redo', 'link', 'expand',
    'collapse', 'zoom-in', 'zoom-out', 'mute', 'volume', 'camera', 'image', 'list', 'grid',
    'chevron-left', 'chevron-right', 'chevron-up', 'chevron-down', 'arrow-left', 'arrow-right',
    'arrow-up', 'arrow-down', 'thumbs-up', 'thumbs-down', 'x',
    'retweet', 'repost', 'comment', 'quote', 'emoji', 'gif', 'poll', 'mic', 'microphone', 'video',
    'phone', 'chat', 'message', 'notification', 'notifications', 'profile', 'logout', 'login',
    'fullscreen', 'minimize', 'maximize', 'shuffle', 'repeat', 'skip', 'rewind', 'eye', 'dislike',
  ]);
  // Attributes that hold a control's tooltip in common UI libraries.
  const TOOLTIP_ATTRS = ['data-tooltip', 'data-tip', 'data-title', 'data-original-title', 'data-bs-original-title', 'data-hint', 'data-balloon'];
  const PAYMENT_AUTOCOMPLETE = /\bcc-(number|csc|exp|exp-month|exp-year|name|type)\b/i;
  const SENSITIVE_WORDS = /\b(card|cc|cvv|cvc|csc|cid|security code|iban|bic|ssn|social security|tax id|passport)\b/i;

  // Most strings have single spaces only: a test costs less than a replace that changes nothing.
  const collapse = (s) => {
    const t = String(s ?? '');
    return /[^\S ]| {2}/.test(t) ? t.replace(/\s+/g, ' ').trim() : t.trim();
  };
  const cap = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

  // What a page shows while it is still working, in the accessible way spinner components
  // mark themselves: a region marked aria-busy, an indeterminate progress bar (no value).
  // Only what is shown counts. Read by `watch` (what the action made busy) and `settle`
  // (a new document still loading).
  const BUSY_QUERY = '[aria-busy="true"], [role="progressbar"]:not([aria-valuenow]), progress:not([value])';
  const shown = (el) => (el.checkVisibility ? el.checkVisibility() : el.getClientRects().length > 0);
  const busyIn = (doc) => [...doc.querySelectorAll(BUSY_QUERY)].filter(shown);
  const clean = (s, n) => cap(collapse(s), n);

  // Elements that draw what they show rather than holding elements: a listener on one is
  // for clicks on it, never delegation.
  const DRAWN = new Set(['CANVAS', 'IMG', 'VIDEO', 'svg']);

  function handleFor(el) {
    let h = handleOf.get(el);
    if (!h) {
      h = `${docId}.${++counter}`;
      handleOf.set(el, h);
    }
    elementOf.set(h, new WeakRef(el));
    return h;
  }

  function implicitRole(el) {
    const tag = el.tagName;
    switch (tag) {
      case 'A':
      case 'AREA':
        return el.hasAttribute('href') ? 'link' : null;
      case 'BUTTON':
        return 'button';
      case 'SELECT':
        return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'TEXTAREA':
        return 'textbox';
      case 'OPTION':
        return 'option';
      case 'SUMMARY':
        return 'button';
      case 'IMG':
        return el.getAttribute('alt') === '' ? 'presentation' : 'img';
      case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6':
        return 'heading';
      case 'NAV':
        return 'navigation';
      case 'FORM':
        return 'form';
      case 'DIALOG':
        return 'dialog';
      case 'LI':
        return 'listitem';
      case 'INPUT': {
        const type = (el.getAttribute('type') || 'text').toLowerCase();
        switch (type) {
          case 'button': case 'submit': case 'reset': case 'image':
            return 'button';
          case 'checkbox':
            return 'checkbox';
          case 'radio':
            return 'radio';
          case 'range':
            return 'slider';
          case 'number':
            return 'spinbutton';
          case 'search':
            return el.hasAttribute('list') ? 'combobox' : 'searchbox';
          case 'hidden':
            return null;
          case 'email': case 'tel': case 'text': case 'url':
            return el.hasAttribute('list') ? 'combobox' : 'textbox';
          default:
            // password, date, color, file…: no ARIA role, the tag and type say enough.
            return null;
        }
      }
      default:
        return null;
    }
  }

  function explicitRole(el) {
    const role = (el.getAttribute('role') || '').trim().toLowerCase();
    const first = role ? role.split(/\s+/)[0] : null;
    // A focusable control marked presentation stays what it is (ARIA's conflict rule): a
    // row's selection checkbox with role="presentation" is still a checkbox.
    if ((first === 'presentation' || first === 'none') && focusableControl(el)) return null;
    return first;
  }

  // Computed styles read while a snapshot runs, by element: names, texts and the contexts of
  // neighbours read the same elements again and again.
  let styleCache = null;
  function styleOf(el) {
    let style = styleCache && styleCache.get(el);
    if (!style) {
      style = el.ownerDocument.defaultView.getComputedStyle(el);
      if (styleCache) styleCache.set(el, style);
    }
    return style;
  }

  // Whether an element's text is hidden from a person although it is in the DOM: not
  // rendered, transparent, clipped to nothing, a 1-pixel screen-reader-only box, or placed
  // off the page where no scrolling shows it. Such text must not enter a name (a face-down
  // card's number, a closed dropdown's options) and is a channel for instructions a person
  // never sees. SEEN: shown. FOR_READERS: hidden from the eye the ways screen-reader-only
  // text is (clipped, a 1-pixel box, off the page), which names an icon-only button when
  // nothing visible does. HIDDEN: from everyone.
  const SEEN = 0;
  const FOR_READERS = 1;
  const HIDDEN = 2;
  const CLIPPED = /^rect\(0px,? 0px,? 0px,? 0px\)$|inset\(\s*(50|100)%|circle\(\s*0(px|%)?\s*[ )]/;
  // What the eye gets of an element, read from its style once a snapshot and kept as bits:
  // its hidden level (above), whether its own text is invisible (INK: no size, not visible,
  // no colour) and whether its box separates words (BLOCK: anything but an inline box).
  // Style reads are most of what a snapshot costs on a large page (each ~1 µs, ten an
  // element), so each is read once here, with what the walk needs of the box too: not
  // rendered (NONE), a box a transform can lift (FLOW, see TRANSFORMABLE), positioned
  // (RELATIVE, or PLACED for any other non-static position), scrolling its own content
  // (SCROLLS) and where the pointer cursor is (POINTER).
  const LEVEL = 3;
  const INK = 4;
  const BLOCK = 8;
  // INK is read only for elements that hold text, when first asked.
  const INK_READ = 16;
  const NONE = 32;
  const FLOW = 64;
  const RELATIVE = 128;
  const PLACED = 256;
  const SCROLLS = 512;
  const POINTER = 1024;
  // A cursor that says "drag me" (grab, move, a resize arrow): see `dragTarget`.
  const GRAB = 2048;
  const GRAB_CURSOR = /^(grab|grabbing|move|all-scroll|[nsew]{1,2}-resize|nwse-resize|nesw-resize|col-resize|row-resize)$/;
  const SCROLLING = (v) => v === 'auto' || v === 'scroll';
  let lookCache = null;
  // Texts of elements read while a snapshot runs (see `contentText`).
  let textCache = null;
  // Boxes read while a snapshot runs: the hidden level, a drawn switch and the element's own
  // entry read the same boxes (~5 µs a read). The page does not change during a snapshot.
  let rectCache = null;
  function rectOf(el) {
    let r = rectCache && rectCache.get(el);
    if (!r) {
      r = el.getBoundingClientRect();
      if (rectCache) rectCache.set(el, r);
    }
    return r;
  }
  function looks(el) {
    let bits = lookCache ? lookCache.get(el) : undefined;
    if (bits === undefined) {
      bits = computeLooks(el);
      if (lookCache) lookCache.set(el, bits);
    }
    return bits;
  }
  const hiddenLevel = (el) => looks(el) & LEVEL;
  const hidesText = (el) => hiddenLevel(el) !== SEEN;
  function computeLooks(el) {
    const style = styleOf(el);
    const display = style.display;
    if (display === 'none') return NONE | HIDDEN;
    let bits = BLOCK_TAGS.has(el.tagName) || (display !== 'inline' && display !== 'contents') ? BLOCK : 0;
    if (TRANSFORMABLE(display)) bits |= FLOW;
    const position = style.position;
    if (position === 'relative') bits |= RELATIVE;
    else if (position !== 'static') bits |= PLACED;
    const x = style.overflowX;
    const y = style.overflowY;
    if (SCROLLING(x) || SCROLLING(y)) bits |= SCROLLS;
    const cursor = style.cursor;
    if (cursor === 'pointer') bits |= POINTER;
    else if (cursor !== 'auto' && GRAB_CURSOR.test(cursor)) bits |= GRAB;
    return bits | hiddenFrom(el, style, position, x !== 'visible' || y !== 'visible');
  }
  function inkOf(el) {
    let bits = looks(el);
    if (!(bits & INK_READ)) {
      const style = styleOf(el);
      const color = style.color;
      bits |= INK_READ;
      if (style.visibility !== 'visible' || style.fontSize === '0px' || color === 'transparent' ||
          (color.startsWith('rgba') && /,\s*0\)$/.test(color))) bits |= INK;
      if (lookCache) lookCache.set(el, bits);
    }
    return (bits & INK) !== 0;
  }
  // `overflow`: whether the box clips its content in either direction.
  function hiddenFrom(el, style, position, overflow) {
    if (style.opacity === '0' || el.getAttribute('aria-hidden') === 'true') return HIDDEN;
    const clipPath = style.clipPath;
    if (clipPath !== 'none' && CLIPPED.test(clipPath)) return FOR_READERS;
    const placed = position === 'absolute' || position === 'fixed';
    // `clip` applies to absolutely positioned boxes only.
    if (placed && CLIPPED.test(style.clip)) return FOR_READERS;
    if (!placed && !overflow) return SEEN;
    const r = rectOf(el);
    if (overflow && (r.width < 2 || r.height < 2)) return FOR_READERS;
    if (placed) {
      if (r.width <= 1 && r.height <= 1) return FOR_READERS;
      const view = el.ownerDocument.defaultView;
      if (r.right + view.scrollX <= 0 || r.bottom + view.scrollY <= 0) return FOR_READERS;
    }
    return SEEN;
  }
  // Whether a text node's own style hides it (see INK).
  const textInvisible = (parent) => !!parent && parent.nodeType === Node.ELEMENT_NODE && inkOf(parent);

  // Text of a subtree as a person sees it and a screen reader reads it: img alt included,
  // hidden text (`hidesText`), aria-hidden and script/style skipped; words apart where the
  // layout puts them apart (a block, a flex item, an inline-block badge: "Inbox 1284", not
  // "Inbox1284"). Stops early once `limit` characters are collected.
  // `skip` is a node, or a predicate saying which nodes to leave out. `forReaders`: also what
  // only screen readers get (see `hiddenLevel`).
  function contentText(node, limit, skip, forReaders = false) {
    let out = '';
    const skipped = typeof skip === 'function' ? skip : (n) => n === skip;
    // While a snapshot runs, an element's text (what `visit` adds for it) is read once: the
    // context of every element in a row reads the same cells again (on a large table that
    // was a third of the snapshot). Not for what only screen readers get, nor under a
    // predicate; under a skipped node, only off the path from `node` down to it.
    const cache = textCache && !forReaders && typeof skip !== 'function' ? textCache : null;
    let onPath = null;
    if (cache && skip) {
      onPath = new Set();
      for (let a = skip; a; a = composedParent(a)) {
        onPath.add(a);
        if (a === node) break;
      }
    }
    // Children by firstChild/nextSibling: the snapshot reads the text around every element,
    // and NodeList iterators cost several times more.
    const visitChildren = (parent) => {
      for (let c = parent.firstChild; c && out.length < limit; c = c.nextSibling) visit(c);
    };
    const visit = (n) => {
      if (cache && n.nodeType === Node.ELEMENT_NODE && !(onPath && onPath.has(n))) {
        const kept = cache.get(n);
        if (kept !== undefined) {
          out += kept;
          return;
        }
        const from = out.length;
        read(n);
        // Kept only when read whole: a read cut short by the limit is not its text.
        if (out.length < limit) cache.set(n, out.slice(from));
        return;
      }
      read(n);
    };
    const read = (n) => {
      const type = n.nodeType;
      if (type === Node.TEXT_NODE) {
        // Whitespace reads the same hidden or not: no style needed for it.
        if (!skipped(n) && (!/\S/.test(n.data) || !textInvisible(n.parentNode))) out += n.data;
        return;
      }
      if (skipped(n)) return;
      if (type === Node.DOCUMENT_FRAGMENT_NODE) {
        visitChildren(n); // a shadow root reached as an ancestor
        return;
      }
      if (type !== Node.ELEMENT_NODE) return;
      const tag = n.tagName;
      if (SKIP_TAGS.has(tag)) return;
      // An SVG's <title> is its name (and is never rendered, so the style test below
      // would drop it).
      if (tag === 'title' && n.namespaceURI === SVG_NS) {
        out += ' ' + n.textContent + ' ';
        return;
      }
      const bits = looks(n);
      const level = bits & LEVEL;
      if (level === HIDDEN || (level === FOR_READERS && !forReaders)) return;
      if (tag === 'IMG' || (tag === 'INPUT' && n.type === 'image')) {
        out += ' ' + (n.getAttribute('alt') || '') + ' ';
        return;
      }
      const block = (bits & BLOCK) !== 0;
      // Block boundaries separate words ("Price" + "$35" must not read "Price$35"); inline
      // ones must not split them ("c<b>art</b>" is one word).
      if (block) out += ' ';
      if (tag === 'SLOT') {
        for (const c of n.assignedNodes({ flatten: true })) {
          if (out.length >= limit) break;
          visit(c);
        }
      } else {
        visitChildren(n.shadowRoot || n);
      }
      if (block) out += ' ';
    };
    visit(node);
    return collapse(out);
  }

  function textOfIds(el, ids) {
    const root = el.getRootNode();
    return ids
      .split(/\s+/)
      .map((id) => (id && root.getElementById ? root.getElementById(id) : null))
      .filter(Boolean)
      .map((ref) => contentText(ref, NAME_CAP * 2) || hiddenNameText(ref))
      .join(' ');
  }

  // `el.labels` searches the whole document (or shadow root) for the labels of `el` on every
  // read: on a page with a thousand fields, the snapshot spent most of its time there. While
  // a snapshot runs, each root's labels are indexed once, in document order as `labels` has
  // them, and read from that index.
  let labelIndex = null;
  function labelsOf(el) {
    if (!labelIndex) return el.labels ? [...el.labels] : [];
    if (!el.labels) return []; // not a labelable element
    const root = el.getRootNode();
    let byControl = labelIndex.get(root);
    if (!byControl) {
      byControl = new Map();
      for (const label of root.querySelectorAll ? root.querySelectorAll('label') : []) {
        const control = label.control;
        if (!control) continue;
        const list = byControl.get(control);
        if (list) list.push(label);
        else byControl.set(control, [label]);
      }
      labelIndex.set(root, byControl);
    }
    return byControl.get(el) || [];
  }

  // A reasonable subset of the accname algorithm, in its precedence order.
  function accessibleName(el, role) {
    const labelledby = el.getAttribute('aria-labelledby');
    if (labelledby) {
      const t = textOfIds(el, labelledby);
      if (t) return t;
    }
    const label = collapse(el.getAttribute('aria-label'));
    if (label) return label;
    const labels = labelsOf(el);
    if (labels.length) {
      const t = collapse(labels.map((l) => contentText(l, NAME_CAP * 2, el) || hiddenNameText(l, el)).join(' '));
      if (t) return t;
    }
    const tag = el.tagName;
    if (tag === 'IMG' || tag === 'AREA' || (tag === 'INPUT' && el.type === 'image')) {
      const alt = collapse(el.getAttribute('alt'));
      if (alt) return alt;
    }
    if (tag === 'INPUT' && ['button', 'submit', 'reset'].includes(el.type)) {
      return collapse(el.value) || (el.type === 'submit' ? 'Submit' : el.type === 'reset' ? 'Reset' : '');
    }
    if (role && NAME_FROM_CONTENT.has(role)) {
      // What a person sees; for an icon-only control, what its screen-reader text says.
      const t = contentText(el, NAME_CAP * 2) || contentText(el, NAME_CAP * 2, null, true);
      if (t) return t;
    }
    const title = collapse(el.getAttribute('title'));
    if (title) return title;
    if (el.namespaceURI === SVG_NS) {
      const t = [...el.children].find((c) => c.tagName === 'title');
      if (t) return collapse(t.textContent);
    }
    return collapse(el.getAttribute('placeholder'));
  }

  // The name of a control that shows only an icon, as a screen reader or a person reading
  // its tooltip gets it: a tooltip attribute, an inner icon's aria-label or title, an SVG
  // sprite's symbol name, else the icon font's class word ("trash" of `fa-trash`).
  function iconName(el) {
    for (const a of TOOLTIP_ATTRS) {
      const t = collapse(el.getAttribute(a));
      if (t) return t;
    }
    const nodes = [el, ...[...el.querySelectorAll('*')].slice(0, 20)];
    for (const n of nodes) {
      if (n === el) continue;
      const t = collapse(n.getAttribute('aria-label') || n.getAttribute('title'));
      if (t) return t;
    }
    for (const n of nodes) {
      if (n.tagName === 'use') {
        const ref = n.getAttribute('href') || n.getAttribute('xlink:href') || '';
        const word = ref.split('#')[1];
        if (word) return word.replace(/^(icon|ico|i|svg)[-_]/, '').replace(ICON_SUFFIX, '').replace(/[-_]+/g, ' ');
      }
      const classes = typeof n.className === 'string' ? n.className : n.getAttribute('class') || '';
      for (const c of classes.split(/\s+/)) {
        const m = ICON_CLASS.exec(c);
        if (m) {
          const word = m[1].replace(ICON_SUFFIX, '');
          if (!ICON_NOISE.test(word)) return word.replace(/-/g, ' ');
        } else if (ICON_WORDS.has(c)) {
          return c.replace(/-/g, ' ');
        }
      }
    }
    return '';
  }

  // A checkbox or radio that a person operates through its label: the input is hidden or
  // has no size (a `label.switch` drawing its own toggle), so the label stands for it.
  function hiddenControlOf(label) {
    const control = label.control;
    if (!control || control.tagName !== 'INPUT' || (control.type !== 'checkbox' && control.type !== 'radio')) return null;
    const r = rectOf(control);
    const style = styleOf(control);
    // Transparent, not rendered or aria-hidden: `hidesText`.
    const hidden = r.width < 2 || r.height < 2 || style.visibility !== 'visible' || hidesText(control);
    if (!hidden) return null;
    // One line for one control: the first of its labels that is drawn stands for it (the
    // switch's track), not also the text label beside it.
    const first = labelsOf(control).find((l) => { const b = rectOf(l); return b.width > 0 && b.height > 0; });
    return first === label ? control : null;
  }

  // `parent`: the element's parent across shadow roots, whose cursor is read only when the
  // element has the pointer cursor.
  function interactivity(el, role, style, parent) {
    const hints = [];
    const tag = el.tagName;
    const native =
      (tag === 'A' && el.hasAttribute('href')) ||
      tag === 'BUTTON' || tag === 'SELECT' || tag === 'TEXTAREA' || tag === 'SUMMARY' ||
      (tag === 'INPUT' && el.type !== 'hidden') ||
      ((tag === 'VIDEO' || tag === 'AUDIO') && el.hasAttribute('controls'));
    if (native) hints.push('native');
    if (el.hasAttribute('role') && INTERACTIVE_ROLES.has(role)) hints.push('role');
    if (el.hasAttribute('onclick')) hints.push('onclick');
    if (el.hasAttribute(LISTENER_MARK)) hints.push('listener');
    if (el.hasAttribute('tabindex') && el.tabIndex >= 0) hints.push('tabindex');
    else if (rowOfList(el, role)) hints.push('item');
    // Only where the pointer cursor starts: descendants inherit it and are not separate targets.
    if (pointerCursor(el, style) && (!parent || !pointerCursor(parent, styleOf(parent)))) {
      hints.push('pointer');
    }
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) {
      hints.push('editable');
    }
    return hints;
  }

  // Whether the element shows the pointer cursor: read with its looks (an element not rendered
  // has none, and is read only when a snapshot lists hidden elements too).
  function pointerCursor(el, style) {
    const bits = looks(el);
    return bits & NONE ? style.cursor === 'pointer' : (bits & POINTER) !== 0;
  }

  // What a field is called, in words: its name, id, placeholder, aria-label and labels, with
  // camelCase and snake_case split ("cardNumber", "card_cvv" → "card Number", "card cvv").
  function fieldWords(el) {
    const parts = [el.name, el.id, el.getAttribute('placeholder'), el.getAttribute('aria-label')];
    for (const l of labelsOf(el)) parts.push(l.textContent);
    return parts.filter(Boolean).join(' ').replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ');
  }

  // Never report the value of a password, a card field or an identity number: the snapshot
  // goes to an LLM. Recognised by type, by autocomplete token, or by what the field is called.
  function isSensitive(el) {
    if (el.tagName !== 'INPUT' && el.tagName !== 'TEXTAREA') return false;
    return el.type === 'password'
      || PAYMENT_AUTOCOMPLETE.test(el.getAttribute('autocomplete') || '')
      || SENSITIVE_WORDS.test(fieldWords(el));
  }

  function attributesOf(el) {
    const attrs = {};
    // One pass over what the element has, rather than a lookup of every attribute reported;
    // by name, as `el.attributes` would make an Attr object of each.
    for (const name of el.getAttributeNames()) {
      if (KEY_ATTRS.has(name) || name.startsWith('aria-')) attrs[name] = cap(collapse(el.getAttribute(name)), ATTR_CAP);
    }
    // Never a password's value, nor a card's: the snapshot goes to an LLM.
    const hasValue = el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT';
    // A checkbox's value is what the form submits, not state: `checked` carries that.
    const stateless = ['hidden', 'checkbox', 'radio'].includes(el.type);
    // Whether it is sensitive last: that reads its labels.
    if (hasValue && !stateless && el.value !== '' && !isSensitive(el)) {
      attrs.value = cap(collapse(el.value), ATTR_CAP);
    }
    return attrs;
  }

  function checkedOf(el) {
    if (el.tagName === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio')) {
      return el.indeterminate ? 'mixed' : String(el.checked);
    }
    const aria = el.getAttribute('aria-checked') ?? el.getAttribute('aria-pressed');
    return aria === 'true' || aria === 'false' || aria === 'mixed' ? aria : null;
  }

  function isDisabled(el) {
    try {
      if (el.matches(':disabled')) return true;
    } catch (_) { /* not a form control */ }
    return !!el.closest('[aria-disabled="true"]');
  }

  function isVisible(el, style, rect) {
    if (rect.width <= 0 || rect.height <= 0) return false;
    if (!el.checkVisibility) return style.visibility === 'visible';
    // Both spellings: the option names changed in Chrome 121. It reads `visibility` too.
    return el.checkVisibility({ opacityProperty: true, visibilityProperty: true, checkOpacity: true, checkVisibilityCSS: true });
  }

  // Text around the element that is not its own: what tells apart two identical "Add to cart"
  // buttons (the product card's title and price). Taken from the nearest ancestor that has any.
  function contextOf(el) {
    // parentNode, not parentElement: a shadow root is a container too, then its host.
    const up = (n) => (n instanceof ShadowRoot ? n.host : n.parentNode);
    let a = el.parentNode;
    for (let depth = 0; a && depth < 5; depth++, a = up(a)) {
      if (a.nodeType === Node.DOCUMENT_NODE || a.tagName === 'BODY' || a.tagName === 'HTML') break;
      const t = contentText(a, CONTEXT_CAP * 2, el);
      if (t) return cap(t, CONTEXT_CAP);
    }
    return '';
  }

  // The parent across shadow roots (a shadow root's parent is its host); null at a document.
  const composedParent = (n) => (n instanceof ShadowRoot ? n.host : n.parentNode);

  function composedContains(outer, node) {
    for (let n = node; n; n = composedParent(n)) if (n === outer) return true;
    return false;
  }

  // What a form field belongs to, as a person would say it: the fieldset's legend, a named
  // group or form around it, else `heading`, the last rendered heading before it in document
  // order. Tells apart fields that have no label of their own ("the 2nd text field in
  // 'Shipping'").
  function groupOf(el, heading) {
    const fieldset = el.closest('fieldset');
    if (fieldset) {
      const legend = [...fieldset.children].find((c) => c.tagName === 'LEGEND');
      const t = legend ? contentText(legend, GROUP_CAP * 2) : collapse(fieldset.getAttribute('aria-label'));
      if (t) return cap(t, GROUP_CAP);
    }
    for (let a = el.parentElement; a; a = a.parentElement) {
      const role = explicitRole(a) || implicitRole(a);
      if (!GROUP_ROLES.has(role) && !GROUP_TAGS.has(a.tagName)) continue;
      if (!a.hasAttribute('aria-label') && !a.hasAttribute('aria-labelledby')) continue;
      const t = accessibleName(a, role);
      if (t) return cap(t, GROUP_CAP);
    }
    return heading ? cap(contentText(heading, GROUP_CAP * 2), GROUP_CAP) : '';
  }

  // ---- names and order real applications need -------------------------------------------

  // A control a person can focus or operate whatever its role attribute says.
  function focusableControl(el) {
    const tag = el.tagName;
    if (tag === 'BUTTON' || tag === 'SELECT' || tag === 'TEXTAREA') return true;
    if (tag === 'INPUT') return el.type !== 'hidden';
    if (tag === 'A') return el.hasAttribute('href');
    return el.hasAttribute('tabindex') && el.tabIndex >= 0;
  }

  // The text of a label or aria-labelledby target that is itself hidden (display:none, a
  // label kept for screen readers only): the accessible-name computation counts a hidden node
  // that is referenced, so it names its field. Empty for a node that is shown (its visible
  // text, read by `contentText`, is all it says). `skip`: the field inside the label.
  function hiddenNameText(ref, skip) {
    if (hiddenLevel(ref) === SEEN && shown(ref)) return '';
    let out = '';
    const walk = (n) => {
      for (let c = n.firstChild; c && out.length < NAME_CAP * 2; c = c.nextSibling) {
        if (c === skip) continue;
        if (c.nodeType === Node.TEXT_NODE) out += c.data;
        else if (c.nodeType === Node.ELEMENT_NODE && !SKIP_TAGS.has(c.tagName)) {
          out += ' ';
          walk(c);
          out += ' ';
        }
      }
    };
    walk(ref);
    return collapse(out);
  }

  // Roles of the rows of a list or grid, and the roles of what holds them.
  const ROW_ROLES = new Set(['row', 'listitem', 'option', 'treeitem']);
  const ROWS_HOLDER = '[role="grid"], [role="treegrid"], [role="listbox"], [role="list"], [role="tree"]';
  // Parents already asked whether one of their children holds the roving tab stop.
  let rovingCache = null;
  // A row of a list a person moves through with the arrow keys (a file browser): only one row
  // has `tabindex=0` (roving tabindex), the others -1; or a row by its role in a list that
  // takes keys or clicks itself. Each row is what a person clicks.
  function rowOfList(el, role) {
    const parent = el.parentElement;
    if (!parent) return false;
    if (el.hasAttribute('tabindex')) {
      let roving = rovingCache ? rovingCache.get(parent) : undefined;
      if (roving === undefined) {
        roving = false;
        for (const c of parent.children) {
          if (c.tagName === el.tagName && c.hasAttribute('tabindex') && c.tabIndex >= 0) {
            roving = true;
            break;
          }
        }
        if (rovingCache) rovingCache.set(parent, roving);
      }
      if (roving) return true;
    }
    if (!ROW_ROLES.has(role) || !el.hasAttribute('role')) return false;
    const holder = parent.closest(ROWS_HOLDER);
    return !!holder && (holder.hasAttribute('tabindex') || holder.hasAttribute(LISTENER_MARK));
  }

  // The name of a field that has none of its own, from where it stands: a table cell's
  // column header (and its row's header), or an editor's labelled region or placeholder.
  function fieldPlaceName(el, hints) {
    return cellName(el) || (hints.includes('editable') ? editorName(el) : '');
  }

  // A field in a form laid out as a table (an admin's inline rows: Title, Publication date,
  // Pages): named by its column's header, and by its row where the row has a header.
  function cellName(el) {
    const cell = el.closest('td, th, [role="gridcell"], [role="cell"]');
    if (!cell) return '';
    const row = cell.closest('tr, [role="row"]');
    const table = row && row.parentElement && row.parentElement.closest('table, [role="grid"], [role="table"], [role="treegrid"]');
    if (!table) return '';
    const columnOf = (r, target) => {
      let col = 0;
      for (const c of r.children) {
        if (c === target) return col;
        col += c.colSpan || 1;
      }
      return -1;
    };
    const col = columnOf(row, cell);
    if (col < 0) return '';
    const isColumnHeader = (c) => (c.tagName === 'TH' && c.getAttribute('scope') !== 'row') || c.getAttribute('role') === 'columnheader';
    const headerRow = (table.tHead && table.tHead.rows[0]) ||
      [...table.querySelectorAll('tr, [role="row"]')].find((r) => r !== row && [...r.children].some(isColumnHeader));
    let header = '';
    if (headerRow) {
      let at = 0;
      for (const h of headerRow.children) {
        const span = h.colSpan || 1;
        if (col >= at && col < at + span) {
          header = contentText(h, NAME_CAP * 2);
          break;
        }
        at += span;
      }
    }
    if (!header) return '';
    const rowHeader = [...row.children].find((c) => c !== cell &&
      ((c.tagName === 'TH' && c.getAttribute('scope') === 'row') || c.getAttribute('role') === 'rowheader'));
    const rowName = rowHeader ? contentText(rowHeader, NAME_CAP) : collapse(row.getAttribute('aria-label'));
    return rowName ? `${header} (${rowName})` : header;
  }

  // A rich-text editor (a contenteditable root) with no name: the region or labelled wrapper
  // it sits in ("Intro"), else its placeholder (aria-placeholder, a data-placeholder drawn by
  // CSS, or a placeholder element drawn inside or beside it).
  function editorName(el) {
    for (let a = el.parentElement, depth = 0; a && depth < 4 && a.tagName !== 'BODY'; a = a.parentElement, depth++) {
      if (a.hasAttribute('aria-labelledby') || a.hasAttribute('aria-label')) {
        const t = accessibleName(a, explicitRole(a) || implicitRole(a));
        if (t) return t;
      }
    }
    const label = wrapperLabel(el);
    if (label) return label;
    const own = collapse(el.getAttribute('aria-placeholder') || el.getAttribute('data-placeholder'));
    if (own) return own;
    const PLACEHOLDER = '[data-placeholder], [class*="placeholder"], [class*="Placeholder"]';
    const drawn = el.querySelector(PLACEHOLDER) || (el.parentElement && el.parentElement.querySelector(PLACEHOLDER));
    if (!drawn || drawn === el) return '';
    return collapse(drawn.getAttribute('data-placeholder')) || contentText(drawn, NAME_CAP * 2);
  }

  // The one label of the field wrapper an editor sits in, as CMSs draw them: Wagtail's
  // `<label for="id_intro">` names a hidden input seven levels above Draftail's editable
  // box, in the same `.w-field`. Only a wrapper holding this one editor and one label, whose
  // label names no other shown field (else it is a neighbour's), and never past a form.
  const EDITABLE = '[contenteditable="true"], [contenteditable=""], [role="textbox"], textarea, input:not([type="hidden"])';
  function wrapperLabel(el) {
    for (let a = el.parentElement, depth = 0; a && depth < 9 && a.tagName !== 'BODY' && a.tagName !== 'FORM'; a = a.parentElement, depth++) {
      const labels = a.querySelectorAll('label');
      if (labels.length > 1) return '';
      if (labels.length === 0) continue;
      const fields = [...a.querySelectorAll(EDITABLE)].filter((f) => f !== el && !el.contains(f) && !f.contains(el) && shown(f));
      if (fields.length) return '';
      const target = labels[0].htmlFor && document.getElementById(labels[0].htmlFor);
      if (target && target !== el && !el.contains(target) && shown(target)) return '';
      return collapse(labels[0].textContent);
    }
    return '';
  }

  // What names a control that a label stands for when the control has no name: the label's
  // own aria-label, tooltip or icon, never the text around it (a toolbar's, a row's).
  function ownLabelName(label) {
    return collapse(label.getAttribute('aria-label')) || collapse(label.getAttribute('title')) || iconName(label);
  }

  // What is open now: the popups of expanded controls (and those controls), visible floating
  // menus and listboxes, dialogs; and what has focus. Listed first when the list is cut.
  function openPopups() {
    const roots = [];
    const owners = new Set();
    for (const owner of document.querySelectorAll('[aria-expanded="true"]')) {
      const ids = collapse(owner.getAttribute('aria-controls') || owner.getAttribute('aria-owns'));
      for (const id of ids ? ids.split(' ') : []) {
        const popup = document.getElementById(id);
        if (popup && shown(popup)) {
          roots.push(popup);
          owners.add(owner);
        }
      }
    }
    for (const p of document.querySelectorAll('[role="menu"], [role="listbox"], dialog[open], [role="dialog"], [role="alertdialog"]')) {
      if (roots.includes(p) || !shown(p)) continue;
      const position = styleOf(p).position;
      if (p.tagName === 'DIALOG' || /dialog/.test(p.getAttribute('role') || '') || position === 'absolute' || position === 'fixed') roots.push(p);
    }
    const focused = deepActive(document);
    return { roots, owners, focused: focused && focused !== document.body && focused !== document.documentElement ? focused : null };
  }
  function isOpenOrFocused(el, open) {
    if (el === open.focused || open.owners.has(el)) return true;
    return open.roots.some((r) => composedContains(r, el));
  }

  // The rows of a grid that sorts by moving rows on screen and says their order with
  // aria-rowindex, the DOM order unchanged: ordered as a person sees them (row index, then
  // position), in the element list and the page's text.
  const GRID = '[role="grid"], [role="treegrid"], [role="table"], table';
  const rowOrder = (a, b) => a.ri - b.ri || a.top - b.top;
  function displayedOrder(elements, indexOf) {
    if (!document.querySelector('[aria-rowindex]')) return;
    const byGrid = new Map();
    for (const [el, index] of indexOf) {
      const row = el.closest && el.closest('[aria-rowindex]');
      const grid = row && row.closest(GRID);
      const ri = row ? Number(row.getAttribute('aria-rowindex')) : NaN;
      if (!grid || !Number.isFinite(ri)) continue;
      if (!byGrid.has(grid)) byGrid.set(grid, []);
      byGrid.get(grid).push({ index, ri, top: rectOf(row).top });
    }
    const moved = new Map(); // old index -> new index
    for (const rows of byGrid.values()) {
      const places = rows.map((r) => r.index).sort((a, b) => a - b);
      const sorted = [...rows].sort((a, b) => rowOrder(a, b) || a.index - b.index);
      sorted.forEach((r, k) => { if (r.index !== places[k]) moved.set(r.index, places[k]); });
    }
    if (!moved.size) return;
    const before = elements.slice();
    for (const [from, to] of moved) elements[to] = before[from];
    for (const item of elements) {
      if (item.within !== undefined && moved.has(item.within)) item.within = moved.get(item.within);
    }
  }
  function gridsInDisplayedOrder(text) {
    if (!document.querySelector('[aria-rowindex]')) return text;
    for (const grid of document.querySelectorAll(GRID)) {
      const rows = [...grid.querySelectorAll('[aria-rowindex]')].filter((r) => r.closest(GRID) === grid && shown(r));
      if (rows.length < 2) continue;
      const sorted = rows.map((r) => ({ r, ri: Number(r.getAttribute('aria-rowindex')), top: r.getBoundingClientRect().top }))
        .sort(rowOrder).map((x) => x.r);
      if (sorted.every((r, i) => r === rows[i])) continue;
      const inDom = rows.map((r) => r.innerText).join('\n');
      const seen = sorted.map((r) => r.innerText).join('\n');
      if (text.includes(inDom)) text = text.replace(inDom, () => seen);
    }
    return text;
  }

  // ---- a menu item the page ignored --------------------------------------------------------

  // The popup menu a menu item sits in (not a menubar: its items open menus).
  function menuOf(el) {
    const menu = el.closest('[role="menu"]');
    return menu && menu !== el ? menu : null;
  }
  // What a command run from `menu` changes: the page's address, its text outside the menu and
  // its fields' values (the menu's own text left out, whether it is still there or not).
  function outsideMenu(menu, menuText) {
    const doc = menu.ownerDocument;
    let body = doc.body ? doc.body.textContent : '';
    const own = menu.isConnected ? menu.textContent : menuText;
    if (own) body = body.replace(own, '');
    let fields = '';
    for (const f of doc.querySelectorAll('input, textarea, select')) {
      fields += (f.type === 'checkbox' || f.type === 'radio' ? String(f.checked) : f.value) + '\u0000';
    }
    return `${doc.defaultView.location.href}\u0001${body}\u0001${fields}`;
  }
  // Before a click on a menu item: the page outside its menu, and where the control that
  // opened the menu is (to open it again for a repeat as real input once it has closed).
  function menuState(el) {
    const menu = menuOf(el);
    if (!menu) return null;
    const menuText = menu.textContent;
    let opener = null;
    const id = menu.id;
    for (const o of el.ownerDocument.querySelectorAll('[aria-expanded="true"], [aria-haspopup]')) {
      const controls = collapse(o.getAttribute('aria-controls') || o.getAttribute('aria-owns'));
      if ((id && controls.split(' ').includes(id)) || (!opener && o.getAttribute('aria-expanded') === 'true' && !menu.contains(o))) opener = o;
    }
    const box = opener && opener.getBoundingClientRect();
    const at = box && box.width > 0 ? { x: box.left + box.width / 2, y: box.top + box.height / 2 } : null;
    return { menu, menuText, before: outsideMenu(menu, menuText), opener: at };
  }
  // After the click: when nothing outside the menu changed (the menu only closed, or nothing
  // at all), the page may take only a real pointer's click (`event.isTrusted`, as Lumino's
  // menus do): said as `menuOnly`, with where to repeat it (open the menu again first when it
  // closed). No place to open it from: no aim, and the worker reports that the page did not react.
  function menuOnly(result, state, el, spot) {
    if (!result.changes || outsideMenu(state.menu, state.menuText) !== state.before) return result;
    result.changes.menuOnly = true;
    const open = state.menu.isConnected && shown(state.menu);
    if (open) result.aim = aimFor(el, spot);
    else if (state.opener) result.aim = aimFor(el, state.opener, spot);
    return result;
  }

  // ---- where a person's pointer lands ---------------------------------------------------

  // The topmost element at (x, y) of `doc`'s viewport, looking into open shadow roots and
  // same-origin frames as the browser's own hit test does; with the point in the coordinates
  // of the hit element's document.
  function deepHit(doc, x, y) {
    let hit = doc.elementFromPoint(x, y);
    for (let depth = 0; hit && depth < 32; depth++) {
      if (hit.shadowRoot) {
        const inner = hit.shadowRoot.elementFromPoint(x, y);
        if (inner && inner !== hit) {
          hit = inner;
          continue;
        }
      }
      if (hit.tagName === 'IFRAME' || hit.tagName === 'FRAME') {
        let inner = null;
        try {
          inner = hit.contentDocument;
        } catch (_) { /* cross-origin: its own driver hit-tests inside it */ }
        if (inner) {
          const r = hit.getBoundingClientRect();
          const ix = x - r.left - hit.clientLeft;
          const iy = y - r.top - hit.clientTop;
          const h = inner.elementFromPoint(ix, iy);
          if (h) {
            hit = h;
            x = ix;
            y = iy;
            continue;
          }
        }
      }
      break;
    }
    return { hit, x, y };
  }

  // (x, y) of el's viewport in the topmost same-origin document's viewport: a frame's element
  // can be covered by something in the page around the frame.
  function rootPoint(el, x, y) {
    let win = el.ownerDocument.defaultView;
    let frame = null;
    try {
      frame = win.frameElement;
    } catch (_) { /* cross-origin parent */ }
    while (frame) {
      const r = frame.getBoundingClientRect();
      x += r.left + frame.clientLeft;
      y += r.top + frame.clientTop;
      win = frame.ownerDocument.defaultView;
      try {
        frame = win.frameElement;
      } catch (_) {
        frame = null;
      }
    }
    return { doc: win.document, x, y };
  }

  // How `hit` relates to `el`: 'inside' (a click there reaches el: el itself, a descendant, or
  // a label of el), 'ancestor' (el is not painted there: clipped, or pointer-events: none), or
  // 'covered' (something else lies on top).
  function relation(el, hit) {
    if (composedContains(el, hit)) return 'inside';
    const label = hit.closest && hit.closest('label');
    if (label && labelsOf(el).includes(label)) return 'inside';
    if (composedContains(hit, el)) return 'ancestor';
    return 'covered';
  }

  // Where a person clicking el would land, for el's box as it is now (scroll first to act):
  // {hit, x, y} with the element the pointer lands on (el or inside it) and the point in its
  // document's viewport; or {covered: element on top}; or {} when el is outside the viewport
  // or not painted where its box is (clipped).
  function reach(el) {
    const view = el.ownerDocument.defaultView;
    const r = el.getBoundingClientRect();
    const left = Math.max(r.left, 0);
    const top = Math.max(r.top, 0);
    const right = Math.min(r.right, view.innerWidth);
    const bottom = Math.min(r.bottom, view.innerHeight);
    if (right <= left || bottom <= top) return {};
    let covered = null;
    for (const [fx, fy] of SPOTS) {
      const x = left + (right - left) * fx;
      const y = top + (bottom - top) * fy;
      const root = rootPoint(el, x, y);
      const found = deepHit(root.doc, root.x, root.y);
      if (!found.hit) continue;
      const how = relation(el, found.hit);
      if (how === 'inside') return found;
      if (how === 'covered' && !covered) covered = found.hit;
    }
    return covered ? { covered } : {};
  }

  // The thing on top, as a person would name it: the outermost element around the hit point
  // that does not contain the covered element (the cookie banner, not a paragraph inside it).
  function describeCover(hit, el) {
    const up = (n) => {
      const p = composedParent(n);
      return p instanceof ShadowRoot ? p.host : p;
    };
    let top = hit;
    for (let a = up(hit); a && a.nodeType === Node.ELEMENT_NODE; a = up(a)) {
      if (a.tagName === 'BODY' || a.tagName === 'HTML' || composedContains(a, el)) break;
      top = a;
    }
    const role = explicitRole(top) || implicitRole(top);
    const name = accessibleName(top, role) || contentText(top, COVER_CAP * 2);
    return { tag: top.tagName.toLowerCase(), role, name: cap(name, COVER_CAP) };
  }

  function optionsOf(el) {
    if (el.tagName !== 'SELECT') return undefined;
    return [...el.options].slice(0, OPTIONS_CAP).map((o) => ({
      value: cap(o.value, ATTR_CAP),
      text: clean(o.text, NAME_CAP),
      selected: o.selected,
    }));
  }

  // Where the element's form submits, only when that is another origin than its document
  // (a "Verify" form posting to another site): the worker asks before typing with Enter or
  // clicking its button. Read from the attributes, resolved against the document: a field
  // named "action" or "method" shadows the form's own properties.
  function submitTarget(el) {
    const form = el.form;
    if (!form) return null;
    const doc = el.ownerDocument;
    const own = (el.tagName === 'BUTTON' || el.tagName === 'INPUT');
    const action = (own && el.getAttribute('formaction')) || form.getAttribute('action') || '';
    const method = ((own && el.getAttribute('formmethod')) || form.getAttribute('method') || 'get').toLowerCase();
    if (method === 'dialog') return null;
    let url;
    try { url = new URL(action, doc.baseURI); } catch (_) { return null; }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin === (doc.defaultView || window).location.origin) return null;
    return { url: url.href, method: method === 'post' ? 'post' : 'get' };
  }

  // Where a link goes, as the browser resolved it (what a click opens), when that leaves its
  // document's origin or the link is in a frame: the worker judges this, never the `href`
  // text, which reads `/\evil.example` or `https:evil.example` as a path on this site.
  function linkTarget(el) {
    if ((el.localName !== 'a' && el.localName !== 'area') || !el.hasAttribute('href')) return null;
    let url;
    // An SVG link's `href` is no string: resolved as the browser resolves it for a click.
    try { url = new URL(typeof el.href === 'string' ? el.href : el.getAttribute('href'), el.baseURI); } catch (_) { return null; }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    const view = el.ownerDocument.defaultView || window;
    return view === view.top && url.origin === view.location.origin ? null : url.href;
  }

  // ---- what the DOM alone does not say: drag targets, positions, icons drawn by CSS -------

  // The innermost shown element whose text holds `wanted` (exactly, else ignoring case and
  // runs of spaces): where a passage named alone is selected, as a person finds it by eye.
  function passageHolder(wanted) {
    const words = wanted.trim().split(/\s+/).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const pattern = new RegExp(words.join('\\s+'), 'i');
    const holds = (n) => n.textContent.includes(wanted) || pattern.test(n.textContent);
    if (!document.body || !holds(document.body)) return null;
    let at = document.body;
    for (;;) {
      const inner = [...at.children].find((c) => !SKIP_TAGS.has(c.tagName) && shown(c) && holds(c));
      if (!inner) return at;
      at = inner;
    }
  }

  // A handle to drag by or a resize grip, by the class the libraries that draw them give it.
  const GRIP_CLASS = /(?:^|\s)(?:ui-resizable-handle|ui-draggable-handle|[\w-]*drag-?handle[\w-]*|[\w-]*grip[\w-]*|handle|resizer|resize-handle)(?:\s|$)/i;
  // Whether a person would drag el though it listens to nothing: its handlers often sit on
  // the document (mousemove, mouseup), which marks nothing on it. Made draggable, showing a
  // grab, move or resize cursor where that cursor starts, or called a handle or grip.
  function dragTarget(el, parent) {
    if (el.getAttribute('draggable') === 'true') return true;
    if ((looks(el) & GRAB) && !(parent && (looks(parent) & GRAB))) return true;
    const cls = el.getAttribute('class');
    // Most classes hold none of the words: a substring test is cheaper than the pattern.
    return !!cls && /handle|grip|resiz/i.test(cls) && GRIP_CLASS.test(cls);
  }

  // An outline (no fill, a stroke) in a drawing whose other parts a person drags: where a
  // dragged shape is dropped, though it listens to nothing itself.
  function dropOutline(el, style) {
    if (style.fill !== 'none' || !style.stroke || style.stroke === 'none') return false;
    const svg = el.ownerSVGElement;
    return !!svg && !!svg.querySelector(`[${LISTENER_MARK}],[draggable="true"]`);
  }

  // Words of a file name or an id: `…/icons/retweet-24.svg` → "retweet", `send-forward` →
  // "send forward"; '' for what reads as no word (`ember123`, a data: URL, `:r1:`).
  const NAME_NOISE = /^(icon|icons|ico|ic|img|image|btn|button|svg|png|sprite|small|large|white|black|dark|light|[0-9]+(px|x)?|[0-9]+x[0-9]+)$/i;
  function nameWords(s) {
    const words = String(s).replace(/([a-z])([A-Z])/g, '$1 $2').split(/[-_.\s@]+/)
      .filter((w) => w && !NAME_NOISE.test(w));
    if (!words.length || words.some((w) => !/^[a-z]+$/i.test(w))) return '';
    return words.join(' ').toLowerCase();
  }
  function urlWords(value) {
    const m = /url\(["']?([^"')]+)["']?\)/.exec(value || '');
    if (!m || /^data:/i.test(m[1])) return '';
    const file = m[1].split(/[?#]/)[0].split('/').pop() || '';
    return nameWords(file.replace(/\.[a-z0-9]+$/i, ''));
  }
  // An image CSS puts in or on the element (`content: url(send.png)`, a background image, a
  // ::before icon), by its file's words. Its own computed style is read already; a pseudo
  // element's only here, for a candidate nothing else names.
  function cssImageWords(el, style, pseudo) {
    const own = urlWords(style.content) || urlWords(style.backgroundImage);
    if (own || !pseudo) return own;
    const view = el.ownerDocument.defaultView;
    for (const p of ['::before', '::after']) {
      const ps = view.getComputedStyle(el, p);
      const w = urlWords(ps.content) || urlWords(ps.backgroundImage);
      if (w) return w;
    }
    return '';
  }
  // What names a control drawn by CSS alone: its image's file name, an image inside it, else
  // its id's words (`#send-forward`).
  function drawnName(el, style) {
    const own = cssImageWords(el, style, true);
    if (own) return own;
    for (const n of [...el.children].slice(0, 4)) {
      const w = cssImageWords(n, styleOf(n), false);
      if (w) return w;
    }
    const grip = GRIP_CLASS.exec(el.getAttribute('class') || '');
    if (grip) return nameWords(grip[0].trim().replace(/^ui-/, ''));
    return el.id ? nameWords(el.id) : '';
  }
  // A named element showing a mark by a CSS image (an X in a cell named "Cell 5"): what it
  // shows, which is its state to a person.
  function noteMark(item, el, style) {
    const w = urlWords(style.backgroundImage) || urlWords(style.content);
    if (w && w !== item.name.toLowerCase()) item.shows = w;
  }

  // Grids and tables walked this snapshot: their rows and header row, read once a grid.
  let gridCache = null;
  const CELL = 'td,th,[role=gridcell],[role=cell],[role=rowheader],[role=columnheader]';
  const HEADER_CELL = 'th,[role=rowheader],[role=columnheader]';
  const cellsOf = (row) => [...row.children].filter((c) => c.matches(CELL));
  function gridOf(table) {
    let g = gridCache && gridCache.get(table);
    if (!g) {
      const rows = [...table.querySelectorAll('tr,[role=row]')].filter((r) => r.closest(GRID) === table);
      // A header row is at the top: only the first rows are read (a table may have thousands).
      const head = rows.slice(0, 3).find((r) => { const c = cellsOf(r); return c.length > 1 && c.every((x) => x.matches(HEADER_CELL) || !x.textContent.trim()); });
      const body = new Map();
      for (const r of rows) if (r !== head) body.set(r, body.size + 1);
      g = { body, head: head ? cellsOf(head) : null };
      if (gridCache) gridCache.set(table, g);
    }
    return g;
  }
  // Where el sits, as a person says it: a cell of a grid or table gets its row and column (by
  // their headers when the grid has them: "2 pm", "Tue"); a shape of a drawing, where its
  // centre is inside the drawing, in percent ("at 40%, 25%").
  function notePlace(item, el, shape) {
    if (shape) {
      const svg = el.ownerSVGElement;
      const box = svg && rectOf(svg);
      const r = rectOf(el);
      if (box && box.width > 0 && box.height > 0) {
        item.at = [Math.round(((r.left + r.width / 2 - box.left) / box.width) * 100), Math.round(((r.top + r.height / 2 - box.top) / box.height) * 100)];
      }
      return;
    }
    const cell = el.closest(CELL);
    const row = cell && cell.parentElement && cell.parentElement.closest('tr,[role=row]');
    const table = row && row.closest(GRID);
    if (!table || cell.matches(HEADER_CELL)) return;
    const g = gridOf(table);
    const cells = cellsOf(row);
    const at = cells.indexOf(cell);
    // A row without a header cell is still named by its first words, as a person reads a list
    // of documents by their titles ("Minutes"): the first other cell with text and no control.
    const rowHead = cells.find((c) => c.matches(HEADER_CELL)) ||
      cells.find((c) => c !== cell && !c.querySelector('input,select,textarea,button') && c.textContent.trim());
    const place = { row: g.body.get(row) || 0, column: cells.filter((c) => !c.matches(HEADER_CELL)).indexOf(cell) + 1 };
    if (place.row < 1 || place.column < 1) return;
    const colHead = g.head && g.head[at];
    if (rowHead) place.rowHeader = clean(contentText(rowHead, GROUP_CAP * 2), GROUP_CAP);
    if (colHead) place.columnHeader = clean(contentText(colHead, GROUP_CAP * 2), GROUP_CAP);
    item.cell = place;
  }

  // Where a piece placed by absolute position sits inside what places it (a pin on a map, a
  // note on a whiteboard, a piece on a board of divs), in percent like a shape of a drawing:
  // only where it is one of several look-alike pieces side by side (same tag and class), which
  // is where their place is all that tells them apart. The list says it only then too.
  function notePinned(item, el, style) {
    if (style.position !== 'absolute' || item.at) return;
    const parent = el.parentElement;
    const box = el.offsetParent;
    if (!parent || !box || box === el.ownerDocument.body || box.tagName === 'HTML') return;
    if (lookAlikesOf(parent, el).length < PIECES) return;
    const b = rectOf(box);
    const r = rectOf(el);
    if (b.width <= 0 || b.height <= 0) return;
    const x = (r.left + r.width / 2 - b.left) / b.width;
    const y = (r.top + r.height / 2 - b.top) / b.height;
    if (x < 0 || x > 1 || y < 0 || y > 1) return;
    item.at = [Math.round(x * 100), Math.round(y * 100)];
  }
  // How many look-alike pieces make a board whose pieces are told apart by place.
  const PIECES = 3;

  // Lists read this snapshot: a parent → its children by tag and class (`kinds`); a list's
  // items and the path to the described element inside each → each item's rank among those
  // whose element there reads the same, and how many read each way (`lists`).
  let amongCache = null;
  const AMONG_DEPTH = 4;
  const kindOf = (n) => n.tagName + '.' + (n.getAttribute('class') || '');
  function lookAlikesOf(parent, child) {
    let kinds = amongCache && amongCache.kinds.get(parent);
    if (!kinds) {
      kinds = new Map();
      for (const c of parent.children) {
        const k = kindOf(c);
        if (!kinds.has(k)) kinds.set(k, []);
        kinds.get(k).push(c);
      }
      if (amongCache) amongCache.kinds.set(parent, kinds);
    }
    return kinds.get(kindOf(child)) || [];
  }
  // What makes two elements namesakes, cheaply: their tag, label words, class and text (not
  // the accessible name, which costs a description of each).
  const lookKey = (n) => n.tagName + '|' + (n.getAttribute('aria-label') || n.getAttribute('title') || '') + '|' +
    (n.getAttribute('class') || '') + '|' + collapse(n.textContent.slice(0, 400));
  // An element's place among the look-alikes of its list, all of them (a long list's far items
  // are described briefly, without a name, so the worker alone could count only the described
  // neighbours): the list is the level, up to AMONG_DEPTH above, with the most items of one tag
  // and class, and the look-alikes are the items whose element at the same place reads the
  // same. Counted, not described: one pass over a list's items for each path into them.
  function noteAmong(item, el) {
    let best = null;
    for (let a = el, depth = 0; depth < AMONG_DEPTH; depth++) {
      const parent = a.parentElement;
      if (!parent || parent.tagName === 'BODY' || parent.tagName === 'HTML') break;
      const items = lookAlikesOf(parent, a);
      if (items.length > 1 && (!best || items.length > best.items.length)) best = { items, unit: a };
      a = parent;
    }
    if (!best) return;
    const path = [];
    for (let n = el; n !== best.unit; n = n.parentElement) path.unshift(Array.prototype.indexOf.call(n.parentElement.children, n));
    const key = path.join('/');
    let byPath = amongCache && amongCache.lists.get(best.items);
    let list = byPath && byPath.get(key);
    if (!list) {
      list = { rankOf: new Map(), countOf: new Map() };
      for (const u of best.items) {
        let n = u;
        for (const i of path) n = n && n.children[i];
        if (!n) continue;
        const k = lookKey(n);
        const seen = (list.countOf.get(k) || 0) + 1;
        list.countOf.set(k, seen);
        list.rankOf.set(u, [seen, k]);
      }
      if (amongCache) {
        if (!byPath) amongCache.lists.set(best.items, (byPath = new Map()));
        byPath.set(key, list);
      }
    }
    const [rank, k] = list.rankOf.get(best.unit) || [0, ''];
    const count = list.countOf.get(k) || 0;
    if (rank > 0 && count > 1) item.among = [rank, count];
  }

  function snapshot(opts) {
    rovingCache = new Map();
    labelIndex = new Map();
    styleCache = new Map();
    gridCache = new Map();
    lookCache = new Map();
    textCache = new Map();
    rectCache = new Map();
    amongCache = { kinds: new Map(), lists: new Map() };
    try {
      return takeSnapshot(opts);
    } finally {
      rovingCache = null;
      labelIndex = null;
      styleCache = null;
      gridCache = null;
      lookCache = null;
      textCache = null;
      rectCache = null;
      amongCache = null;
    }
  }

  // A digest of the page's text and field values: what tells the loop guard that the page
  // changed between two identical actions ("Generate" twice, a new number each time) even
  // when the element list did not. textContent, not innerText: no layout is needed.
  function textDigest() {
    let h = 0x811c9dc5;
    const mix = (s) => {
      for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    };
    mix(document.body ? document.body.textContent.slice(0, 500000) : '');
    for (const f of document.querySelectorAll('input, textarea, select')) {
      mix(f.type === 'checkbox' || f.type === 'radio' ? String(f.checked) : f.value);
    }
    return (h >>> 0).toString(16);
  }

  function takeSnapshot(opts) {
    const o = { ...DEFAULTS, ...(opts || {}) };
    const top = { w: window.innerWidth, h: window.innerHeight };
    const elements = [];
    const frames = [];
    const forms = new Map();
    // Every root walked (the document, open shadow roots, same-origin frames): watched for
    // changes once the snapshot is taken (`arm`).
    const roots = [];
    // Each same-origin frame walked, with its document then: a frame that loads another
    // document changes nothing in this one.
    const frameDocs = [];
    let visited = 0;
    let truncated = false;
    // Walking what is open past the caps (see below).
    let openPass = false;
    const briefly = !o.describeAll && !o.includeHidden && window === window.top;
    // Candidates below the viewport so far: the list shows the first of them (document order).
    let seenBelow = 0;
    // Brief elements above the viewport, in document order, with what `describe` needs: the
    // last DESCRIBED_ABOVE are described once the walk is over.
    const briefAbove = [];

    // Forget handles whose elements were collected, so the map does not grow forever.
    for (const [h, ref] of elementOf) if (!ref.deref()) elementOf.delete(h);

    const submitMethodOf = (el) => {
      const own = el.hasAttribute('formmethod') ? String(el.formMethod || '').toLowerCase() : '';
      if (own) return own;
      const owner = el.form || el.closest('form');
      return owner ? String(owner.method || '').toLowerCase() : '';
    };
    const formIndex = (el) => {
      const form = el.form || el.closest('form');
      if (!form) return null;
      if (!forms.has(form)) forms.set(form, forms.size);
      return forms.get(form);
    };

    // `offset` turns frame-local coordinates into the top document's.
    const walkRoot = (root, framePath, offset) => {
      roots.push(root);
      const walker = (root.ownerDocument || root).createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
      let frameCounter = 0;
      let node = walker.nextNode();
      while (node) {
        if (++visited > o.maxNodes && !openPass) {
          truncated = true;
          return;
        }
        const el = node;
        if (SKIP_TAGS.has(el.tagName) || ownNodes.has(el)) {
          node = skipSubtree(walker);
          continue;
        }
        // Past `maxElements`: once the walk has gone past the viewport (as many candidates
        // below it as are described), it stops; before that (a long page scrolled far down),
        // it goes on to the viewport, passing over without reading its style (what the walk
        // costs most) a node whose box lies far from it. Its descendants are still walked,
        // since a fixed or absolute one may be in view.
        if (elements.length >= o.maxElements && !openPass) {
          truncated = true;
          if (seenBelow >= DESCRIBED_BELOW) return;
          const r = rectOf(el);
          const y = r.top + offset.y;
          if (y + r.height < -2 * top.h || y > 3 * top.h) {
            node = walker.nextNode();
            continue;
          }
        }
        const style = styleOf(el);
        const bits = looks(el);
        // Nothing a person can use: not rendered, or hidden from everyone but the eye (an
        // off-screen drawer marked aria-hidden, a page behind a modal marked inert).
        if ((bits & NONE || el.getAttribute('aria-hidden') === 'true' || el.inert) && !o.includeHidden) {
          node = skipSubtree(walker);
          continue;
        }
        // Tracked during the walk rather than searched backwards from each field: a page
        // with a thousand fields would otherwise walk back over the same nodes a thousand times.
        if (/^H[1-6]$/.test(el.tagName) || explicitRole(el) === 'heading') heading = el;
        noteLayer(el, style, bits, offset);
        noteScrollBox(el, bits);
        visit(el, style, framePath, offset);
        if (el.shadowRoot) walkRoot(el.shadowRoot, framePath, offset);
        if (el.tagName === 'IFRAME' || el.tagName === 'FRAME') {
          const path = framePath.concat(frameCounter++);
          let doc = null;
          try {
            doc = el.contentDocument;
          } catch (_) { /* cross-origin */ }
          const r = el.getBoundingClientRect();
          const inner = { x: offset.x + r.left + el.clientLeft, y: offset.y + r.top + el.clientTop };
          // The content box in top-document coordinates: where a cross-origin frame's own
          // snapshot is placed when the worker merges it.
          const bbox = { x: Math.round(inner.x), y: Math.round(inner.y), width: el.clientWidth, height: el.clientHeight };
          frames.push({ path, url: doc ? doc.URL : String(el.src || ''), accessible: !!doc, bbox });
          if (doc) frameDocs.push([el, doc]);
          if (doc && doc.documentElement) {
            askMarks(doc);
            walkRoot(doc.documentElement, path, inner);
          }
        }
        node = walker.nextNode();
      }
    };

    const skipSubtree = (walker) => {
      let n = walker.nextSibling();
      while (!n && walker.parentNode()) n = walker.nextSibling();
      return n;
    };

    // Element -> its index in `elements`: which listed element another one sits in.
    const indexOf = new Map();
    // The last heading met in document order, for groupOf.
    let heading = null;

    // Hit-testing costs ~0.5 ms an element on a large page, so at listing time only elements
    // that something could lie on top of are hit-tested: those whose box meets the box of a
    // positioned, transformed or z-indexed element other than themselves, their ancestors and
    // their descendants (a banner, a sticky header, a dialog, a panel). Acting hit-tests
    // always, so anything this misses is still caught before a click.
    const layers = [];
    const inViewportBoxes = [];
    const noteLayer = (el, style, bits, offset) => {
      const positioned = (bits & PLACED) !== 0 || ((bits & RELATIVE) !== 0 && style.zIndex !== 'auto');
      // A transform is read only where it can lift a box over others: not on inline boxes,
      // which it does not move, nor on table rows and cells, which pages do not slide over
      // content. Read on every element of a large table, it cost a fifth of the snapshot;
      // acting hit-tests anyway.
      if (!positioned && (!(bits & FLOW) || style.transform === 'none')) return;
      const r = rectOf(el);
      if (r.width <= 0 || r.height <= 0) return;
      const x = r.left + offset.x;
      const y = r.top + offset.y;
      if (x >= top.w || y >= top.h || x + r.width <= 0 || y + r.height <= 0) return;
      layers.push({ el, x, y, right: x + r.width, bottom: y + r.height });
    };
    // Boxes that scroll their own content (a chat log, a long list in a panel), by element,
    // with their box in their document's viewport: a row scrolled out of such a box is not in
    // view, whatever the page's scroll.
    const scrollBoxes = new Map();
    const noteScrollBox = (el, bits) => {
      if (bits & SCROLLS && el.tagName !== 'HTML' && el.tagName !== 'BODY') {
        scrollBoxes.set(el, rectOf(el));
      }
    };
    const outsideScrollBox = (el, r) => {
      if (!scrollBoxes.size) return false;
      for (let a = composedParent(el), depth = 0; a && depth < 64; a = composedParent(a), depth++) {
        const box = scrollBoxes.get(a);
        if (box) return r.right <= box.left || r.left >= box.right || r.bottom <= box.top || r.top >= box.bottom;
      }
      return false;
    };
    const inScrollBox = (el) => {
      if (!scrollBoxes.size) return false;
      for (let a = composedParent(el), depth = 0; a && depth < 64; a = composedParent(a), depth++) {
        if (scrollBoxes.has(a)) return true;
      }
      return false;
    };
    const mayBeCovered = (el, b) => layers.some((l) =>
      l.x < b.x + b.width && b.x < l.right && l.y < b.y + b.height && b.y < l.bottom &&
      l.el !== el && !composedContains(l.el, el) && !composedContains(el, l.el));

    const visit = (el, style, framePath, offset) => {
      const view = el.ownerDocument.defaultView;
      const parent = el.parentElement || (el.parentNode && el.parentNode.host) || null;
      const explicit = explicitRole(el);
      const implicit = implicitRole(el);
      const role = explicit || implicit;
      const hints = interactivity(el, role, style, parent);
      // An item of a list that is itself a target (a pointer cursor on the `ul`, a listbox
      // role): the click lands on the item, and the item is what does the work.
      if (el.tagName === 'LI' && parent && indexOf.has(parent) &&
          (LIST_TAGS.has(parent.tagName) || LIST_ROLES.has(explicitRole(parent)))) {
        hints.push('item');
      }
      // A shape of a drawing that listens (the listener on the <svg> or a group): each shape
      // is what a person points at.
      const shape = el.namespaceURI === SVG_NS && SHAPES.has(el.tagName);
      if (shape && !hints.length) {
        for (let a = parent, depth = 0; a && depth < 8 && a.namespaceURI === SVG_NS; a = a.parentElement, depth++) {
          if (indexOf.has(a)) {
            hints.push('item');
            break;
          }
        }
      }
      if (!hints.length && (dragTarget(el, parent) || (shape && dropOutline(el, style)))) hints.push(shape ? 'item' : 'drag');
      // A label whose checkbox has no size or is hidden (a drawn switch) stands for it.
      const control = el.tagName === 'LABEL' ? hiddenControlOf(el) : null;
      if (control && !hints.includes('native')) hints.push('native');
      if (!hints.length) return;
      const r = rectOf(el);
      let visible = isVisible(el, style, r);
      // Off the page to the left or the top, where no scrolling reaches (a closed drawer); not
      // a row its scroll box scrolled up there, which keeps its number while it exists.
      if (visible && (r.right + view.scrollX <= 0 || r.bottom + view.scrollY <= 0) && !inScrollBox(el)) visible = false;
      // Only a listener: a pane that large is where the page listens for clicks on what is
      // inside it (delegation), not a control of its own. A canvas, image or video shows
      // nothing made of elements, so its listener is its own (a chart clicked at a point).
      if (visible && hints.length === 1 && hints[0] === 'listener' && !DRAWN.has(el.tagName) &&
          r.width * r.height > (view.innerWidth * view.innerHeight) / 3) return;
      if (!visible && !o.includeHidden) return;
      const bbox = {
        x: Math.round(r.left + offset.x),
        y: Math.round(r.top + offset.y),
        width: Math.round(r.width),
        height: Math.round(r.height),
      };
      const inViewport =
        visible && bbox.x < top.w && bbox.y < top.h && bbox.x + bbox.width > 0 && bbox.y + bbox.height > 0 &&
        !outsideScrollBox(el, r);
      const isField = el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT';
      const form = formIndex(el);
      // What is at its default (null, false, empty) is left out: on a large page the snapshot
      // is ~1,500 elements, written here and parsed by the worker every step.
      const item = { handle: handleFor(el), tag: el.tagName.toLowerCase() };
      if (framePath.length) item.frame = framePath;
      // Where the worker's list puts it (see DESCRIBED_BELOW): near enough to be listed, or
      // far and only counted.
      const below = !inViewport && bbox.y + bbox.height > 0;
      const rank = below ? seenBelow++ : 0; // among the candidates below the viewport
      // Past `maxElements` only what the list can show is kept: the page's end, scrolled to,
      // is listed like its start (walking stopped at the cap, it was not reported at all).
      if (elements.length >= o.maxElements) {
        truncated = true;
        const shown = inViewport || (below ? rank < DESCRIBED_BELOW : bbox.y + bbox.height > -2 * top.h);
        if (!shown) return;
      }
      const near = !briefly || inViewport || form !== null || (below && rank < DESCRIBED_BELOW);
      const about = { el, item, style, role, explicit, implicit, control, shape, isField, form, heading, hints };
      if (near) {
        describe(about);
      } else {
        // What the worker's summary counts it as, and what tells it apart from the next one.
        item.brief = true;
        const controlRole = control && (explicitRole(control) || implicitRole(control));
        if (controlRole) item.role = controlRole;
        else if (explicit) item.role = explicit;
        if (implicit) item.implicitRole = implicit;
        // What the list's summary counts it under ("12 fields in 'Shipping'").
        if (isField || hints.includes('editable')) {
          const group = groupOf(el, heading);
          if (group) item.group = group;
        }
        if (!below) briefAbove.push([about, elements.length]);
      }
      item.bbox = bbox;
      item.visible = visible;
      if (inViewport) item.inViewport = true;
      item.interactive = hints;
      // In the viewport but under something else (a banner, a panel): a person cannot click
      // it, so the map does not offer it (decided after the walk, below). Elements outside
      // the viewport are hit-tested when acted on, after scrolling them into view.
      if (inViewport) inViewportBoxes.push([el, bbox, elements.length]);
      indexOf.set(el, elements.length);
      elements.push(item);
    };

    // The full description of a candidate (see DESCRIBED_BELOW), with what `visit` found.
    const describe = ({ el, item, style, role, explicit, implicit, control, shape, isField, form, heading, hints }) => {
      delete item.brief;
      item.name = clean(accessibleName(el, role), NAME_CAP);
      item.attrs = attributesOf(el);
      // What a person sees of it: hidden text left out, words apart where the layout
      // separates them.
      const text = isField ? '' : clean(contentText(el, TEXT_CAP * 2), TEXT_CAP);
      const context = contextOf(el);
      let checked = checkedOf(el);
      // A field's place (its table column, its editor's region or label) before an icon's or
      // id's words: "Title", not "id books title".
      if (!item.name && (isField || hints.includes('editable'))) item.name = clean(fieldPlaceName(el, hints), NAME_CAP);
      // Not a select's: its content is its options, not its name.
      if (!item.name && !text && el.tagName !== 'SELECT') item.name = clean(contentText(el, NAME_CAP * 2, null, true) || iconName(el) || drawnName(el, style), NAME_CAP);
      else if (!text) noteMark(item, el, style);
      notePlace(item, el, shape);
      if (!shape) notePinned(item, el, style);
      noteAmong(item, el);
      if (control) {
        // Said as the control it stands for: `switch "Compact mode" checked`.
        const drawn = /switch|toggle/i.test((el.getAttribute('class') || '') + ' ' + (control.getAttribute('class') || ''));
        const controlRole = explicitRole(control) || (drawn ? 'switch' : implicitRole(control));
        item.role = controlRole;
        item.name = clean(accessibleName(control, controlRole) || ownLabelName(el), NAME_CAP);
        checked = checkedOf(control);
        if (control.disabled) item.disabled = true;
      }
      // What the eye tells apart where the DOM has no words: a shape's colour, a coloured
      // box's colour (the worker names the colour).
      if (shape) {
        item.fill = style.fill && style.fill !== 'none' ? style.fill : style.stroke;
      } else if (!isField && !text && !item.name) {
        const bg = style.backgroundColor;
        if (bg && bg !== 'transparent' && !/^rgba\(.*,\s*0\)$/.test(bg)) item.fill = bg;
      }
      if (explicit && !control) item.role = explicit;
      if (implicit) item.implicitRole = implicit;
      if (text) item.text = text;
      if (context) item.context = context;
      if (isDisabled(el)) item.disabled = true;
      if (isField && el.readOnly) item.readonly = true;
      if (el.tagName === 'TEXTAREA' && style.resize !== 'none') item.resizable = true;
      if (hints.length === 1 && hints[0] === 'listener' && el.getAttribute(LISTENER_MARK) === 'hover') item.hoverOnly = true;
      if (checked !== null) item.checked = checked;
      if (form !== null) {
        item.form = form;
        // A form that posts changes something on the server: the worker judges such a
        // submission against the task. A button's own formmethod wins over its form's.
        if (submitMethodOf(el) === 'post') item.formMethod = 'post';
      }
      const sends = form !== null ? submitTarget(el) : null;
      if (sends) item.submitsTo = sends;
      const opens = linkTarget(el);
      if (opens) item.linksTo = opens;
      if (el.getRootNode() instanceof ShadowRoot) item.shadow = true;
      if (isOpenOrFocused(el, openRoots)) item.open = true;
      if (el === openRoots.focused) item.focused = true;
      const options = optionsOf(el);
      if (options) item.options = options;
      if (isField || hints.includes('editable')) {
        const group = groupOf(el, heading);
        if (group) item.group = group;
      }
    };

    // Popups open now (an expanded button's menu, a visible listbox or dialog): their items
    // are listed first when the list is cut.
    const openRoots = openPopups();
    askMarks(document);
    walkRoot(document.documentElement, [], { x: 0, y: 0 });
    // A walk cut short before an open popup (a dropdown's listbox appended at the end of a
    // long page): the popup is walked anyway, as what a person just opened.
    if (truncated) {
      openPass = true;
      for (const popup of openRoots.roots) {
        if (indexOf.has(popup) || [...popup.querySelectorAll('*')].some((n) => indexOf.has(n))) continue;
        walkRoot(popup, [], { x: 0, y: 0 });
      }
      openPass = false;
    }
    for (const [about] of briefAbove.slice(-DESCRIBED_ABOVE)) describe(about);

    // After the walk: a layer later in the document covers what came before it.
    const covers = new Map();
    for (const [el, bbox, index] of inViewportBoxes) {
      if (mayBeCovered(el, bbox)) noteCover(elements[index], el, reach(el).covered, covers);
    }

    // Which listed element each one sits in, and which listed elements hold nothing of their
    // own besides other listed elements (an `li[role=tab]` around the link that switches the
    // tab, a list around its items): a click on those lands on what is inside them.
    const holders = new Set();
    for (const [el, index] of indexOf) {
      for (let a = composedParent(el), depth = 0; a && depth < 64; a = composedParent(a), depth++) {
        const outer = indexOf.get(a);
        if (outer !== undefined) {
          elements[index].within = outer;
          holders.add(a);
          break;
        }
      }
    }
    for (const el of holders) {
      if (elements[indexOf.get(el)].brief) continue; // never listed
      const own = contentText(el, 64, (n) => n !== el && indexOf.has(n));
      if (!own) elements[indexOf.get(el)].bare = true;
    }

    displayedOrder(elements, indexOf);
    const scroller = document.scrollingElement || document.documentElement;
    const result = {
      docId,
      url: location.href,
      title: document.title,
      scroll: { x: Math.round(window.scrollX), y: Math.round(window.scrollY) },
      viewport: { width: top.w, height: top.h },
      page: { width: scroller.scrollWidth, height: scroller.scrollHeight },
      frames,
      elements,
      truncated,
      textDigest: textDigest(),
    };
    // The page's text as rendered, verbatim (line breaks, preformatted runs of spaces, a
    // trailing space kept): `extract_text` of the whole page, for a task that copies an exact
    // value. The worker fences it as page text.
    if (o.maxText > 0) {
      result.text = cap(gridsInDisplayedOrder(String(document.body ? document.body.innerText : '')), o.maxText);
    }
    arm(roots, frameDocs);
    return result;
  }

  // Whether the page changed since the last snapshot: watched from the moment a snapshot is
  // taken, so that the worker can act on that snapshot's elements without taking another when
  // nothing changed while the model thought. Anything counts, conservatively: a DOM mutation
  // outside the driver's own overlay (in the document, an open shadow root or a same-origin
  // frame), a field edited, anything scrolled, another URL.
  let since = null;
  function arm(roots, frameDocs) {
    if (since) since.stop();
    const state = { url: location.href, dirty: false, roots, frameDocs };
    // The first change settles the question until the next snapshot: stop watching then, so
    // a busy page left after a task pays for one batch of records, not for ever.
    const dirty = () => {
      state.dirty = true;
      state.stop();
    };
    const own = (n) => ownNodes.has(n);
    const foreign = (r) => !own(r.target) && r.attributeName !== LISTENER_MARK &&
      !(r.type === 'childList' && [...r.addedNodes, ...r.removedNodes].every(own));
    const observers = [];
    const docs = new Set();
    for (const root of roots) {
      const doc = root.ownerDocument || root;
      const view = doc.defaultView;
      if (!view) continue;
      docs.add(doc);
      const observer = new view.MutationObserver((records) => {
        if (records.some(foreign)) dirty();
      });
      observer.observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
      observers.push(observer);
    }
    const EVENTS = ['input', 'change', 'scroll'];
    for (const doc of docs) for (const type of EVENTS) doc.addEventListener(type, dirty, true);
    state.stop = () => {
      for (const observer of observers) observer.disconnect();
      for (const doc of docs) for (const type of EVENTS) doc.removeEventListener(type, dirty, true);
    };
    since = state;
    watchRestless();
  }

  // True when the last snapshot still describes the page (see `arm`).
  function unchanged() {
    return !!since && !since.dirty && since.url === location.href &&
      since.roots.every((r) => r.isConnected) &&
      since.frameDocs.every(([frame, doc]) => frame.contentDocument === doc);
  }

  // A listed element something else lies on top of: marked covered, with the name of what
  // covers it (a colour picker left open over the form), so that the model knows the control
  // is there and what to close first. `covers`: names already found, by covering element.
  function noteCover(item, el, over, covers) {
    if (!over) return;
    item.covered = true;
    if (!covers.has(over)) covers.set(over, describeCover(over, el).name);
    const name = covers.get(over);
    if (name) item.coveredBy = name;
  }

  // ---- what the page changes on its own -----------------------------------------------

  // A blinking caret, a ticking clock, a shimmer or pulse toggled on a timer: nodes whose
  // attributes or text the page changes while no action is watched. Seen changing in
  // RESTLESS_AFTER separate batches, a node is the page's own motion, and its attribute and
  // text changes (and the animations it starts) during an action's watch are not the
  // action's effect: a key press that changed nothing but a caret reads as no effect. Elements
  // added or removed always count. Recorded from each look (`arm`) for RESTLESS_FOR_MS, so
  // that a page left after a task is not watched for ever.
  const RESTLESS_AFTER = 3;
  const RESTLESS_FOR_MS = 15000;
  const restlessSeen = new WeakMap();
  let restlessObserver = null;
  let restlessTimer = 0;
  // Watches running now: what changes then may be their action's effect, not the page's own.
  let watching = 0;
  // The node a record is about: a text node's edit, or an element's attribute or its text
  // replaced (`textContent =`); null for elements added or removed.
  const restlessNode = (r) => {
    if (r.type !== 'childList') return r.target;
    const nodes = [...r.addedNodes, ...r.removedNodes];
    return nodes.length && nodes.every((n) => n.nodeType === Node.TEXT_NODE) ? r.target : null;
  };
  const isRestless = (n) => !!n && (restlessSeen.get(n) || 0) >= RESTLESS_AFTER;
  const cosmetic = (r) => isRestless(restlessNode(r));
  const restlessAnimation = (a) => !!(a.effect && a.effect.target && isRestless(a.effect.target));
  function watchRestless() {
    clearTimeout(restlessTimer);
    restlessTimer = setTimeout(() => {
      if (restlessObserver) restlessObserver.disconnect();
      restlessObserver = null;
    }, RESTLESS_FOR_MS);
    if (restlessObserver) return;
    restlessObserver = new MutationObserver((records) => {
      if (watching) return;
      const batch = new Set();
      for (const r of records) {
        const n = restlessNode(r);
        if (n && !ownNodes.has(n)) batch.add(n);
      }
      for (const n of batch) restlessSeen.set(n, (restlessSeen.get(n) || 0) + 1);
    });
    restlessObserver.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  }

  // ---- acting ---------------------------------------------------------------------------

  const fail = (error, message) => ({ ok: false, error, message });

  function resolve(handle) {
    if (typeof handle !== 'string' || !handle.startsWith(docId + '.')) {
      return { err: fail('stale-handle', `handle ${handle} belongs to another page or frame`) };
    }
    const ref = elementOf.get(handle);
    if (!ref) return { err: fail('not-found', `no element was ever given handle ${handle}`) };
    const el = ref.deref();
    if (!el || !el.isConnected) {
      elementOf.delete(handle);
      return { err: fail('stale-handle', `the element of handle ${handle} is no longer in the page`) };
    }
    return { el };
  }

  function checkVisible(el) {
    const style = el.ownerDocument.defaultView.getComputedStyle(el);
    return isVisible(el, style, el.getBoundingClientRect());
  }

  function reveal(el) {
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  }

  // The element focus goes to when a person presses the mouse on `hit`: the nearest focusable
  // element from the hit point up (tabindex=-1 counts: the mouse can focus it), else none.
  function focusTargetOf(hit) {
    for (let n = hit; n; n = composedParent(n)) {
      if (n.nodeType !== Node.ELEMENT_NODE) continue;
      if (n.tabIndex >= 0 || n.hasAttribute('tabindex') || n.isContentEditable) return n;
      if (n.tagName === 'BODY') break;
    }
    return null;
  }

  // The event sequence of a person's mouse click at (x, y) on `hit`, in hit's document:
  // hover, press (which moves focus unless the page prevents it, as a real press does), release
  // and click. The click is dispatched rather than called with el.click() so that it carries
  // the coordinates; a dispatched click runs activation behaviour (follow a link, toggle a
  // checkbox, forward a label's click, submit a form) like a real one.
  function pointerSequence(hit, x, y, click) {
    const view = hit.ownerDocument.defaultView;
    const base = { bubbles: true, cancelable: true, composed: true, view, clientX: x, clientY: y, button: 0 };
    const pointer = { ...base, pointerId: 1, pointerType: 'mouse', isPrimary: true };
    const send = (Ctor, type, init) => hit.dispatchEvent(new Ctor(type, init));
    send(view.PointerEvent, 'pointerover', pointer);
    send(view.PointerEvent, 'pointerenter', { ...pointer, bubbles: false });
    send(view.MouseEvent, 'mouseover', base);
    send(view.MouseEvent, 'mouseenter', { ...base, bubbles: false });
    send(view.PointerEvent, 'pointermove', pointer);
    send(view.MouseEvent, 'mousemove', base);
    // A page that cancels pointerdown gets no mouse events for the press (Pointer Events'
    // rule), but focus still moves; canceling mousedown is what keeps focus where it was.
    const down = send(view.PointerEvent, 'pointerdown', { ...pointer, buttons: 1 });
    const focusMoves = down ? send(view.MouseEvent, 'mousedown', { ...base, buttons: 1, detail: 1 }) : true;
    if (focusMoves) {
      const target = focusTargetOf(hit);
      if (target && typeof target.focus === 'function') {
        target.focus({ preventScroll: true });
      } else {
        const active = hit.ownerDocument.activeElement;
        if (active && active !== hit.ownerDocument.body && typeof active.blur === 'function') active.blur();
      }
    }
    send(view.PointerEvent, 'pointerup', pointer);
    if (down) send(view.MouseEvent, 'mouseup', { ...base, detail: 1 });
    if (click) send(view.PointerEvent, 'click', { ...pointer, detail: 1 });
  }

  function usable(el) {
    if (isDisabled(el)) return fail('disabled', 'the element is disabled');
    reveal(el);
    if (!checkVisible(el)) return fail('not-visible', 'the element is not visible');
    return null;
  }

  // Where the pointer lands on el once it is scrolled into view: {hit, x, y}, or a `covered`
  // failure naming what lies on top. An element not painted where its box is (clipped by an
  // ancestor, pointer-events: none) gets the events itself, as before hit-testing existed.
  // A highlight asked with the act (`acting.mark`), shown once the element has been
  // hit-tested: hit-testing just after the overlay went in cost ~5 ms on a large page (the
  // page's hit-test data was stale), where afterwards the next frame brings it up to date
  // during the watch. An act that never aims (refused first, or a read) shows it at its end.
  const showMark = (el) => {
    const mark = acting.mark;
    if (!mark) return;
    acting.mark = null;
    highlight(el, mark);
  };

  function aim(el) {
    const spot = reach(el);
    showMark(el);
    if (spot.covered) {
      const by = describeCover(spot.covered, el);
      return { err: { ...fail('covered', `the element is covered by ${by.role || by.tag} "${by.name}"`), by } };
    }
    if (spot.hit) return spot;
    const r = el.getBoundingClientRect();
    return { hit: el, x: r.left + r.width / 2, y: r.top + r.height / 2 };
  }

  // ---- what an action changed -----------------------------------------------------------

  // The focused element, looking into shadow roots and same-origin frames.
  function deepActive(doc) {
    let a = doc.activeElement;
    for (let depth = 0; a && depth < 32; depth++) {
      if (a.shadowRoot && a.shadowRoot.activeElement) {
        a = a.shadowRoot.activeElement;
        continue;
      }
      if (a.tagName === 'IFRAME' || a.tagName === 'FRAME') {
        let inner = null;
        try {
          inner = a.contentDocument;
        } catch (_) { /* cross-origin */ }
        if (inner && inner.activeElement) {
          a = inner.activeElement;
          continue;
        }
      }
      break;
    }
    return a;
  }

  // What a person sees of an element's own state.
  function stateOf(el) {
    const aria = (name) => el.getAttribute(name);
    return {
      checked: checkedOf(el),
      expanded: aria('aria-expanded'),
      selected: aria('aria-selected'),
      open: 'open' in el ? String(!!el.open) : null,
      value: 'value' in el && !isSensitive(el) ? String(el.value) : null,
      disabled: String(isDisabled(el)),
    };
  }

  const ATTRS_SEEN = new Set([
    'class', 'style', 'hidden', 'open', 'src', 'href', 'disabled', 'value', 'checked',
    'aria-expanded', 'aria-selected', 'aria-checked', 'aria-pressed', 'aria-hidden', 'aria-current',
    // Where an SVG shape is: a drag that moves a shape rewrites these, not a style.
    'transform', 'x', 'y', 'cx', 'cy', 'r', 'd', 'points', 'x1', 'y1', 'x2', 'y2', 'width', 'height',
  ]);

  // Starts watching what an action on el does to the page; `done()` waits for the page to
  // settle and says what changed: a navigation, the URL, the title, where focus went, el's own
  // state, and elements added, removed or changed. The driver's own overlay is not counted.
  //
  // `lookOpts` (snapshot options, or nothing): also take the next step's snapshot while the
  // watch waits, as soon as the page has been still for a poll, so that its time overlaps
  // the wait instead of following it. `with` adds it (JSON) only if nothing at all changed
  // after it was taken (`unchanged`, as the worker checks it again before using it).
  function watch(el, lookOpts) {
    // Where the first look goes as soon as it is taken (see `lookOf`).
    const publish = acting.look;
    let published;
    const doc = el.ownerDocument;
    const view = doc.defaultView;
    const root = rootPoint(el, 0, 0).doc;
    const docs = root === doc ? [doc] : [root, doc];
    const url = () => docs.map((d) => d.defaultView.location.href).join(' ');
    // Script-set values (an autocomplete filling its field) change no attribute, so the
    // fields are compared one by one; a password's value is compared, never reported.
    const fieldValues = () => {
      const values = new Map();
      for (const d of docs) {
        for (const f of d.querySelectorAll('input, textarea, select')) {
          values.set(f, f.type === 'checkbox' || f.type === 'radio' ? String(f.checked) : f.value);
        }
      }
      return values;
    };
    const fieldsBefore = fieldValues();
    const before = { url: url(), title: root.title, focus: deepActive(root), state: stateOf(el) };
    watching++;
    const counts = { added: 0, removed: 0, attributes: 0, text: 0 };
    let lastMutation = 0;
    let loading = false;
    // The overlay is the driver's own; the head (a new title, a style tag) is not seen.
    const mine = (n) => {
      if (ownNodes.has(n)) return true;
      const e = n.nodeType === Node.ELEMENT_NODE ? n : n.parentElement;
      return !!(e && e.closest('head'));
    };
    // Whether the page shows it is still working on the action: a region that turned
    // aria-busy, an indeterminate progress bar (no value) that appeared or was shown (a
    // hidden one kept in the page for the purpose), or an animation (a spinner) that started
    // after this moment. What was busy and shown, or running, before (a loader stuck
    // elsewhere) says nothing about the action.
    const busyBefore = new Set(docs.flatMap(busyIn));
    // The animations running before, by identity: a start time compared with the timeline's
    // time at this moment missed a spinner the action started within the same frame (its
    // start time came out a hundredth of a millisecond earlier).
    const animations = (d) => (d.getAnimations ? d.getAnimations().filter((a) => a.playState === 'running') : []);
    const runningBefore = new Set(docs.flatMap(animations));
    const working = () => docs.some((d) => {
      for (const b of busyIn(d)) if (!busyBefore.has(b) && !mine(b)) return true;
      return animations(d).some((a) => !runningBefore.has(a) && !restlessAnimation(a));
    });
    const observer = new view.MutationObserver((records) => {
      // Only what is counted delays the end of the watch: a page rewriting data-* attributes
      // all the time would otherwise never look quiet.
      const total = () => counts.added + counts.removed + counts.attributes + counts.text;
      const start = total();
      for (const r of records) {
        if (mine(r.target) || cosmetic(r)) continue;
        if (r.type === 'childList') {
          counts.added += [...r.addedNodes].filter((n) => n.nodeType === Node.ELEMENT_NODE && !mine(n)).length;
          counts.removed += [...r.removedNodes].filter((n) => n.nodeType === Node.ELEMENT_NODE && !mine(n)).length;
          const texts = [...r.addedNodes, ...r.removedNodes].filter((n) => n.nodeType === Node.TEXT_NODE && n.data.trim());
          counts.text += texts.length;
        } else if (r.type === 'attributes') {
          if (ATTRS_SEEN.has(r.attributeName)) counts.attributes++;
        } else {
          counts.text++;
        }
      }
      if (total() > start) lastMutation = performance.now();
    });
    for (const d of docs) {
      observer.observe(d, { subtree: true, childList: true, attributes: true, characterData: true });
    }
    // A new document replaces this one soon after a navigation starts (a local page within
    // milliseconds), and a result still pending then is lost: the watch ends at once.
    let wake = null;
    const leaving = () => {
      loading = true;
      if (wake) wake();
    };
    const onNavigate = (e) => {
      if (!e.destination || !e.destination.sameDocument) leaving();
    };
    const onLeave = leaving;
    const windows = docs.map((d) => d.defaultView);
    for (const w of windows) {
      if (w.navigation) w.navigation.addEventListener('navigate', onNavigate);
      w.addEventListener('pagehide', onLeave);
      w.addEventListener('beforeunload', onLeave);
    }
    const focusMoved = () => {
      const now = deepActive(root);
      if (now === before.focus || !now || now === now.ownerDocument.body) return null;
      // Focus on the element acted on (or inside it) is what pressing on it does.
      if (composedContains(el, now)) return null;
      return now;
    };
    // `fields`: compare every field's value too. Left to the end of the watch: on a page of a
    // thousand fields that costs several milliseconds, and a script-set value with no other
    // change only means the watch waits NO_CHANGE_MS rather than QUIET_MS.
    const summary = (fields) => {
      const after = stateOf(el);
      const state = Object.keys(after).filter((k) => after[k] !== before.state[k]).map((k) => ({ name: k, value: after[k] }));
      const moved = focusMoved();
      // Only what changed, so that `{}` reads "nothing visible changed".
      const changes = {};
      for (const [k, n] of Object.entries(counts)) if (n) changes[k] = n;
      if (state.length) changes.state = state;
      if (fields) {
        let edited = 0;
        for (const [f, v] of fieldValues()) {
          if (f !== el && fieldsBefore.has(f) && fieldsBefore.get(f) !== v) edited++;
        }
        if (edited) changes.fields = edited;
      }
      if (loading) changes.loading = true;
      if (url() !== before.url) changes.url = el.isConnected ? view.location.href : root.defaultView.location.href;
      if (root.title !== before.title) changes.title = true;
      if (moved) changes.focus = explicitRole(moved) || implicitRole(moved) || moved.tagName.toLowerCase();
      return changes;
    };
    let ignored = [];
    const changed = () => {
      const c = summary(false);
      const state = (c.state || []).filter((x) => !ignored.includes(x.name));
      return Object.keys(c).some((k) => k !== 'state') || state.length > 0;
    };
    let look;
    let looks = 0;
    // Time spent taking looks, for the worker's step timings (`lookMs`).
    let lookMs = 0;
    // Taken at most twice: a page that keeps changing after the action is looked at by the
    // worker once the watch is over, as without `lookOpts`. `still`: the page has been quiet
    // for a poll, or nothing at all changed by the first wake, a frame after the action.
    const lookAgain = (still) => {
      if (look !== undefined && !unchanged()) look = undefined;
      if (!lookOpts || look !== undefined || looks >= 2 || loading) return;
      if (!still || working()) return;
      looks++;
      const t = performance.now();
      look = JSON.stringify(snapshot(lookOpts));
      lookMs += performance.now() - t;
      if (publish && looks === 1) {
        published = look;
        publish.resolve(look);
      }
    };
    // `frame`: wake after the page's next animation frame (and the tasks queued by it) if
    // that comes first. A page shows a click's immediate effects by then (a handler's
    // changes, a menu opened in requestAnimationFrame), so a click that changed nothing is
    // known a few milliseconds after it rather than a poll later, and the look it needs
    // takes that time back (on a large page the look runs past NO_CHANGE_MS otherwise).
    // A tab in the background has no frames: the timer wakes it.
    const sleep = (ms, frame) => new Promise((r) => {
      let raf = 0;
      const done = () => {
        clearTimeout(timer);
        if (raf) window.cancelAnimationFrame(raf);
        r();
      };
      const timer = setTimeout(done, ms);
      if (frame) raf = window.requestAnimationFrame(() => setTimeout(done, 0));
      wake = done;
    });
    return {
      // `ignore`: states of el the action is meant to change (a field's value when typing).
      async done(ignore = []) {
        ignored = ignore;
        const t0 = performance.now();
        let firstChange = 0;
        // When the watch may end: QUIET_MS after the last change, or NO_CHANGE_MS after the
        // action when nothing changed.
        const due = () => (firstChange ? Math.max(lastMutation, firstChange) + QUIET_MS : t0 + NO_CHANGE_MS);
        let wait = POLL_MS;
        let first = true;
        try {
          while (!loading) {
            await sleep(wait, first);
            const now = performance.now();
            if (loading) break;
            if (!firstChange && changed()) firstChange = now;
            const waited = now >= due();
            const long = now - t0 >= MAX_WATCH_MS;
            if ((waited || long) && (!working() || now - t0 >= MAX_BUSY_MS)) break;
            const quiet = now - Math.max(lastMutation, firstChange || t0) >= POLL_MS;
            lookAgain(quiet || (first && !firstChange && !lastMutation));
            first = false;
            // Wake when the watch may end rather than up to a poll after it, and at once when
            // that moment passed since this poll began (a look taken just now ran past it).
            // Already past it then (the page still working): poll.
            const left = due() - performance.now();
            wait = left > 0 ? Math.min(POLL_MS, left) : waited ? POLL_MS : 0;
          }
        } finally {
          watching = Math.max(0, watching - 1);
          observer.disconnect();
          for (const w of windows) {
            if (w.navigation) w.navigation.removeEventListener('navigate', onNavigate);
            w.removeEventListener('pagehide', onLeave);
            w.removeEventListener('beforeunload', onLeave);
          }
        }
        if (look !== undefined && (loading || !unchanged())) look = undefined;
        const c = summary(true);
        if (c.state) {
          c.state = c.state.filter((s) => !ignore.includes(s.name));
          if (!c.state.length) delete c.state;
        }
        return c;
      },
      // The result with the look beside it, when one was kept; only whether it was, for the
      // look already handed to `lookOf`.
      with: (result) => {
        const timed = lookMs ? { ...result, lookMs } : result;
        if (look === undefined) return timed;
        return look === published ? { ...timed, lookKept: true } : { ...timed, look };
      },
    };
  }

  async function click(el, lookOpts) {
    const blocked = usable(el);
    if (blocked) return blocked;
    const spot = aim(el);
    if (spot.err) return spot.err;
    const seen = watch(el, lookOpts);
    const menu = menuState(el);
    pointerSequence(spot.hit, spot.x, spot.y, true);
    const result = { ok: true, changes: await seen.done() };
    return seen.with(menu ? menuOnly(result, menu, el, spot) : result);
  }

  function setNativeValue(el, value) {
    // React and friends track the value through the instance's own setter; the prototype's
    // setter bypasses that tracker so their onChange sees the change.
    const view = el.ownerDocument.defaultView;
    const proto =
      el.tagName === 'TEXTAREA' ? view.HTMLTextAreaElement.prototype
        : el.tagName === 'SELECT' ? view.HTMLSelectElement.prototype
          : view.HTMLInputElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, 'value').set;
    setter.call(el, value);
  }

  function fire(el, type, init) {
    const view = el.ownerDocument.defaultView;
    const Ctor = type === 'input' ? view.InputEvent : view.Event;
    el.dispatchEvent(new Ctor(type, { bubbles: true, cancelable: type !== 'input', composed: true, ...init }));
  }

  function pressEnter(el) {
    const view = el.ownerDocument.defaultView;
    const init = { key: 'Enter', code: 'Enter', keyCode: 13, which: 13, bubbles: true, cancelable: true, composed: true };
    for (const type of ['keydown', 'keypress', 'keyup']) el.dispatchEvent(new view.KeyboardEvent(type, init));
  }

  // A person clicks into a field before typing (which may open a date picker or a list of
  // suggestions): the same press at the same spot, unless the field already has focus.
  function pressInto(el, spot) {
    if (deepActive(el.ownerDocument) !== el) pointerSequence(spot.hit, spot.x, spot.y, true);
    if (el.ownerDocument.activeElement !== el) el.focus({ preventScroll: true });
  }

  async function type(el, action, lookOpts) {
    const blocked = usable(el);
    if (blocked) return blocked;
    const text = String(action.text ?? '');
    const clear = action.clear !== false;
    const isField = el.tagName === 'TEXTAREA' || (el.tagName === 'INPUT' && !['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'hidden'].includes(el.type));
    if (!isField && !el.isContentEditable) return fail('not-editable', `a ${el.tagName.toLowerCase()} cannot be typed into`);
    if (isField && el.readOnly) return fail('read-only', 'the field is read-only: its value cannot be changed by typing');
    const spot = aim(el);
    if (spot.err) return spot.err;
    const seen = watch(el, lookOpts);
    // The field's new value is the point of typing, not a change to report.
    const expected = ['value'];
    if (isField) {
      pressInto(el, spot);
      const value = clear ? text : el.value + text;
      if (clear && el.value !== '') {
        setNativeValue(el, '');
        fire(el, 'input', { inputType: 'deleteContentBackward' });
      }
      setNativeValue(el, value);
      fire(el, 'input', { inputType: 'insertText', data: text });
      fire(el, 'change');
      // Typed inputs (number, date, email with pattern…) may refuse the text.
      const accepted = el.value === value;
      if (action.submit) submit(el);
      return seen.with({ ok: true, accepted, changes: await seen.done(expected) });
    }
    {
      pressInto(el, spot);
      const editorCopies = formCopies(el);
      const shownBefore = collapse(el.innerText);
      const sel = el.ownerDocument.getSelection();
      const range = el.ownerDocument.createRange();
      range.selectNodeContents(el);
      if (!clear) range.collapse(false);
      sel.removeAllRanges();
      sel.addRange(range);
      // execCommand is deprecated but it is the one path rich editors (ProseMirror, Draft,
      // Lexical) all observe, because it produces beforeinput/input like real typing.
      if (!el.ownerDocument.execCommand('insertText', false, text)) {
        if (clear) el.textContent = text;
        else el.append(text);
        fire(el, 'input', { inputType: 'insertText', data: text });
      }
      if (action.submit) pressEnter(el);
      await editorCopies.synced();
      const changes = await seen.done(expected);
      return seen.with({ ok: true, accepted: editorHolds(el, text, shownBefore), changes });
    }
  }

  // A rich editor (Draft.js in Wagtail, Quill, TinyMCE…) keeps its own state and copies it
  // into a hidden field of its form some time after the last edit (Wagtail: 250 ms after it),
  // where a person's next click comes later than that. Before typing: the form's hidden
  // fields' values; `synced()` resolves once one of them changed, or after SYNC_CAP_MS, so a
  // "Save" clicked next sends the typed text rather than the old one.
  const SYNC_CAP_MS = 1000;
  function formCopies(el) {
    const form = el.closest('form');
    const hidden = form ? [...form.elements].filter((f) => (f.type === 'hidden' || f.tagName === 'TEXTAREA') && !f.getClientRects().length) : [];
    const before = hidden.map((f) => f.value);
    return {
      synced: () => new Promise((resolve) => {
        if (!hidden.length) return resolve();
        const t0 = Date.now();
        const tick = () => {
          if (hidden.some((f, i) => f.value !== before[i]) || Date.now() - t0 >= SYNC_CAP_MS) resolve();
          else setTimeout(tick, 25);
        };
        tick();
      }),
    };
  }

  // Whether the editor, once it re-rendered from its own state, took the typed text: an
  // editor that ignored the edit puts its old text back, and the step must not read as done.
  // Text it shows otherwise than typed (a "- " turned into a list) still counts as taken.
  function editorHolds(el, text, shownBefore) {
    const shown = collapse(el.innerText);
    const typed = collapse(text);
    return !typed || shown.includes(typed) || shown !== shownBefore;
  }

  function submit(el) {
    const form = el.form;
    if (form) {
      // requestSubmit runs validation and fires `submit`, unlike form.submit().
      if (typeof form.requestSubmit === 'function') form.requestSubmit();
      else form.submit();
    } else {
      pressEnter(el);
    }
  }

  async function selectOption(el, action, lookOpts) {
    if (el.tagName !== 'SELECT') return fail('not-select', `a ${el.tagName.toLowerCase()} is not a <select>`);
    const blocked = usable(el);
    if (blocked) return blocked;
    const wanted = String(action.option ?? '');
    const options = [...el.options];
    const lower = collapse(wanted).toLowerCase();
    const match =
      options.find((o) => o.value === wanted) ||
      options.find((o) => collapse(o.text) === collapse(wanted)) ||
      options.find((o) => collapse(o.text).toLowerCase() === lower);
    if (!match) {
      const available = options.slice(0, 20).map((o) => collapse(o.text)).join(', ');
      return fail('not-found', `no option "${wanted}"; available: ${available}`);
    }
    if (match.disabled) return fail('disabled', `option "${collapse(match.text)}" is disabled`);
    // A native list cannot be opened by script; what matters is that a person could reach it.
    const spot = aim(el);
    if (spot.err) return spot.err;
    const mode = action.mode === 'add' || action.mode === 'remove' ? action.mode : null;
    if (mode && !el.multiple) return fail('bad-action', 'this list holds one option at a time: choose it without "mode"');
    const seen = watch(el, lookOpts);
    el.focus({ preventScroll: true });
    // A multi-select keeps its other options when one is added or removed (a person's
    // Ctrl+click); otherwise the option becomes the selection.
    if (mode) match.selected = mode === 'add';
    else setNativeValue(el, match.value);
    fire(el, 'input');
    fire(el, 'change');
    return seen.with({ ok: true, value: match.value, text: collapse(match.text), changes: await seen.done(['value']) });
  }

  // ---- hands: keys, hover, drag, sliders, text selection, points ------------------------
  //
  // Synthetic events (isTrusted false), as click and type use. A page that listens only to
  // trusted input ignores them; the watch then sees no change and the worker says "the page
  // did not react" (core `report.rs`), never done. Keys carry no default action when
  // dispatched, so the defaults a person relies on (Tab moves focus, Enter activates,
  // PageDown scrolls, Ctrl+A selects, Escape closes a dialog) are carried out here, and only
  // when the page did not cancel the keydown, as the browser would.

  const NAMED_KEYS = {
    enter: ['Enter', 'Enter', 13], return: ['Enter', 'Enter', 13],
    escape: ['Escape', 'Escape', 27], esc: ['Escape', 'Escape', 27],
    tab: ['Tab', 'Tab', 9], space: [' ', 'Space', 32], spacebar: [' ', 'Space', 32],
    backspace: ['Backspace', 'Backspace', 8], delete: ['Delete', 'Delete', 46], del: ['Delete', 'Delete', 46],
    arrowup: ['ArrowUp', 'ArrowUp', 38], up: ['ArrowUp', 'ArrowUp', 38],
    arrowdown: ['ArrowDown', 'ArrowDown', 40], down: ['ArrowDown', 'ArrowDown', 40],
    arrowleft: ['ArrowLeft', 'ArrowLeft', 37], left: ['ArrowLeft', 'ArrowLeft', 37],
    arrowright: ['ArrowRight', 'ArrowRight', 39], right: ['ArrowRight', 'ArrowRight', 39],
    home: ['Home', 'Home', 36], end: ['End', 'End', 35],
    pageup: ['PageUp', 'PageUp', 33], pagedown: ['PageDown', 'PageDown', 34],
    insert: ['Insert', 'Insert', 45],
  };
  for (let i = 1; i <= 12; i++) NAMED_KEYS['f' + i] = ['F' + i, 'F' + i, 111 + i];
  const MODIFIERS = {
    control: ['ctrlKey', 'Control', 'ControlLeft', 17], ctrl: ['ctrlKey', 'Control', 'ControlLeft', 17],
    shift: ['shiftKey', 'Shift', 'ShiftLeft', 16],
    alt: ['altKey', 'Alt', 'AltLeft', 18], option: ['altKey', 'Alt', 'AltLeft', 18],
    meta: ['metaKey', 'Meta', 'MetaLeft', 91], cmd: ['metaKey', 'Meta', 'MetaLeft', 91],
    command: ['metaKey', 'Meta', 'MetaLeft', 91],
  };

  // "Control+Shift+A" → {key, code, keyCode, mods: {ctrlKey…}, modKeys: [[key, code, keyCode]]},
  // or null for what is not a key.
  function parseKey(text) {
    const raw = String(text ?? '').trim();
    // A lone "+" is the plus key, not a chord.
    const parts = raw === '+' ? ['+'] : raw.split(/\s*\+\s*/).filter(Boolean);
    if (!parts.length) return null;
    const mods = { ctrlKey: false, shiftKey: false, altKey: false, metaKey: false };
    const modKeys = [];
    for (const p of parts.slice(0, -1)) {
      const m = MODIFIERS[p.toLowerCase()];
      if (!m) return null;
      mods[m[0]] = true;
      modKeys.push(m.slice(1));
    }
    const last = parts[parts.length - 1];
    const named = NAMED_KEYS[last.toLowerCase()];
    if (named) return { key: named[0], code: named[1], keyCode: named[2], mods, modKeys };
    const mod = MODIFIERS[last.toLowerCase()];
    if (mod) return { key: mod[1], code: mod[2], keyCode: mod[3], mods, modKeys };
    if ([...last].length !== 1) return null;
    const upper = last.toUpperCase();
    const letter = /^[A-Z]$/.test(upper);
    const digit = /^[0-9]$/.test(last);
    // With Shift a letter is its capital; without, as a keyboard sends it, lower case.
    const key = letter ? (mods.shiftKey ? upper : last.toLowerCase()) : last;
    const code = letter ? 'Key' + upper : digit ? 'Digit' + last : '';
    const keyCode = letter || digit ? upper.charCodeAt(0) : 0;
    return { key, code, keyCode, mods, modKeys };
  }

  const isTextField = (el) =>
    el && (el.tagName === 'TEXTAREA' ||
      (el.tagName === 'INPUT' && !['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'hidden', 'range', 'color'].includes(el.type)));
  const editableRoot = (el) => {
    let root = null;
    for (let n = el; n && n.nodeType === Node.ELEMENT_NODE && n.isContentEditable; n = n.parentElement) root = n;
    return root;
  };

  // The element scrolled by keys or `scroll` inside `el`: el itself when its content
  // overflows it and it may scroll, else the nearest such ancestor (null: the page).
  function scrollerOf(el) {
    for (let n = el; n && n.nodeType === Node.ELEMENT_NODE; n = n.parentElement) {
      if (n === n.ownerDocument.body || n === n.ownerDocument.documentElement) return null;
      const s = n.ownerDocument.defaultView.getComputedStyle(n);
      const y = /(auto|scroll|overlay)/.test(s.overflowY) && n.scrollHeight > n.clientHeight + 1;
      if (y) return n;
    }
    return null;
  }

  function scrollBox(box, view, how) {
    const el = box || view.document.scrollingElement || view.document.documentElement;
    const page = box ? el.clientHeight : view.innerHeight;
    const top = {
      up: el.scrollTop - Math.round(page * 0.85), down: el.scrollTop + Math.round(page * 0.85),
      line_up: el.scrollTop - 40, line_down: el.scrollTop + 40,
      top: 0, end: el.scrollHeight,
    }[how];
    if (box) el.scrollTop = top;
    else view.scrollTo({ top, behavior: 'instant' });
  }

  function tabbables(doc) {
    return [...doc.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex], [contenteditable=""], [contenteditable="true"]')]
      .filter((n) => n.tabIndex >= 0 && !isDisabled(n) && !(n.tagName === 'INPUT' && n.type === 'hidden') && shown(n));
  }

  // What the browser does for a key that the page did not cancel (see the block's comment).
  function keyDefault(target, k) {
    const doc = target.ownerDocument;
    const view = doc.defaultView;
    const ctrl = k.mods.ctrlKey || k.mods.metaKey;
    const editable = editableRoot(target);
    const field = isTextField(target);
    if (k.key === 'Tab') {
      const all = tabbables(doc);
      const at = all.indexOf(target);
      const next = all[k.mods.shiftKey ? (at <= 0 ? all.length - 1 : at - 1) : (at + 1) % all.length];
      if (next) next.focus();
      return;
    }
    if (ctrl && /^[a-z]$/i.test(k.key)) {
      const c = k.key.toLowerCase();
      if (c === 'a') {
        if (field) target.select();
        else doc.getSelection().selectAllChildren(editable || doc.body);
      } else if (editable && 'biu'.includes(c)) {
        doc.execCommand({ b: 'bold', i: 'italic', u: 'underline' }[c]);
      }
      return;
    }
    if (k.mods.altKey || ctrl) return;
    if (k.key === 'Escape') {
      const popover = doc.querySelector(':popover-open');
      const dialog = target.closest('dialog[open]') || [...doc.querySelectorAll('dialog[open]')].pop();
      if (dialog && dialog.dispatchEvent(new view.Event('cancel', { cancelable: true }))) dialog.close();
      else if (popover && popover.hidePopover) popover.hidePopover();
      return;
    }
    if (k.key === 'Enter') {
      if (field && target.tagName === 'INPUT') {
        if (target.form) submit(target);
      } else if (field || editable) {
        doc.execCommand(field ? 'insertText' : 'insertParagraph', false, '\n');
      } else if (target.matches('a[href], button, summary, input[type=submit], input[type=button], input[type=reset], input[type=image]')) {
        target.click();
      }
      return;
    }
    if (target.tagName === 'INPUT' && target.type === 'range') {
      const step = Number(target.step) > 0 ? Number(target.step) : 1;
      const min = target.min === '' ? 0 : Number(target.min);
      const max = target.max === '' ? 100 : Number(target.max);
      const v = Number(target.value);
      const next = {
        ArrowUp: v + step, ArrowRight: v + step, ArrowDown: v - step, ArrowLeft: v - step,
        PageUp: v + (max - min) / 10, PageDown: v - (max - min) / 10, Home: min, End: max,
      }[k.key];
      if (next !== undefined) {
        setNativeValue(target, String(next));
        fire(target, 'input');
        fire(target, 'change');
      }
      return;
    }
    if (k.key === 'Backspace' || k.key === 'Delete') {
      if (field || editable) doc.execCommand(k.key === 'Backspace' ? 'delete' : 'forwardDelete');
      return;
    }
    if (field || editable) {
      if ([...k.key].length === 1) doc.execCommand('insertText', false, k.key);
      return;
    }
    if (k.key === ' ' && target.matches('button, summary, input[type=checkbox], input[type=radio], input[type=submit], input[type=button]')) {
      target.click();
      return;
    }
    const how = {
      PageDown: 'down', ' ': k.mods.shiftKey ? 'up' : 'down', PageUp: 'up',
      ArrowDown: 'line_down', ArrowUp: 'line_up', Home: 'top', End: 'end',
    }[k.key];
    if (how) scrollBox(scrollerOf(target), view, how);
  }

  // Fires keydown (keypress for a character or Enter), the default action unless the page
  // canceled it, keyup: on `target`, with the chord's modifiers pressed around them.
  function keyEvents(target, k) {
    const view = target.ownerDocument.defaultView;
    const base = { bubbles: true, cancelable: true, composed: true, view, ...k.mods };
    const send = (type, key, code, keyCode) =>
      target.dispatchEvent(new view.KeyboardEvent(type, { ...base, key, code, keyCode, which: keyCode, charCode: type === 'keypress' ? key.charCodeAt(0) : 0 }));
    for (const [key, code, keyCode] of k.modKeys) send('keydown', key, code, keyCode);
    const go = send('keydown', k.key, k.code, k.keyCode);
    const printable = [...k.key].length === 1 || k.key === 'Enter';
    const ctrl = k.mods.ctrlKey || k.mods.metaKey || k.mods.altKey;
    const pressed = go && printable && !ctrl ? send('keypress', k.key === 'Enter' ? '\r' : k.key, k.code, k.keyCode) : go;
    if (go && pressed) keyDefault(target, k);
    send('keyup', k.key, k.code, k.keyCode);
    for (const [key, code, keyCode] of [...k.modKeys].reverse()) send('keyup', key, code, keyCode);
  }

  // Where the pointer aimed, in the top frame's viewport, for the worker's trusted repeat
  // of an action the page ignored (core `trusted.rs`); none inside a frame of another origin,
  // whose coordinates this driver cannot place.
  function aimFor(el, from, to, html5) {
    let top = false;
    try {
      top = window.top === window || !!window.top.document;
    } catch (_) { /* a cross-origin parent */ }
    if (!top) return undefined;
    const a = rootPoint(el, from.x, from.y);
    const out = { from: [a.x, a.y], html5: !!html5 };
    if (to) {
      const b = rootPoint(el, to.x, to.y);
      out.to = [b.x, b.y];
    }
    return out;
  }

  // Elements shown around el (its menu item, list or parent): a CSS :hover menu shows its
  // submenu without a DOM change, which the watch cannot see.
  const shownAround = (el) => {
    const root = el.closest('li, [role=menuitem], nav, [role=menubar], [role=menu]') || el.parentElement || el;
    let n = 0;
    for (const e of root.querySelectorAll('*')) if (shown(e)) n++;
    return n;
  };

  // A trusted repeat: `observe` starts watching el (answering at once), the worker sends the
  // input through Chrome's debugger, `collect` says what changed.
  let observing = null;
  function observe(el) {
    observing = { seen: watch(el, null), el, around: shownAround(el), menu: menuState(el) };
    return { ok: true };
  }
  async function collect() {
    const o = observing;
    observing = null;
    if (!o) return fail('bad-action', 'nothing was being watched');
    const changes = await o.seen.done();
    const appeared = o.el.isConnected ? shownAround(o.el) - o.around : 0;
    if (appeared > 0) changes.added = (changes.added || 0) + appeared;
    if (o.menu && outsideMenu(o.menu.menu, o.menu.menuText) === o.menu.before) changes.menuOnly = true;
    return { ok: true, changes };
  }

  async function press(el, action, lookOpts) {
    const k = parseKey(action.key);
    if (!k) return fail('bad-action', `"${String(action.key).slice(0, 40)}" is not a key; use names such as Escape, Enter, Tab, ArrowDown, PageDown, Control+A`);
    let target;
    if (el) {
      const blocked = usable(el);
      if (blocked) return blocked;
      const spot = aim(el);
      if (spot.err) return spot.err;
      // Keys go where focus is: a person clicks into the element first, or tabs to it.
      const doc = el.ownerDocument;
      // Whether focus landed anywhere while the element was focused (counted, since it may
      // land back where it was: a terminal's box passing it on to its textarea again).
      let landed = 0;
      const note = () => { landed++; };
      if (deepActive(doc) !== el) {
        doc.addEventListener('focusin', note, true);
        try {
          if (el.tabIndex >= 0 || el.hasAttribute('tabindex') || el.isContentEditable || isTextField(el)) el.focus({ preventScroll: true });
          else pointerSequence(spot.hit, spot.x, spot.y, false);
        } finally {
          doc.removeEventListener('focusin', note, true);
        }
      }
      target = deepActive(doc);
      // Focus the element passed on (a terminal's visible box to its hidden textarea) is
      // where a person's keys go.
      const passedOn = landed > 0 && target && target !== el && target !== doc.body;
      if (!target || target === el.ownerDocument.body || (!composedContains(el, target) && !passedOn)) target = el;
    } else {
      target = deepActive(document);
      if (!target || target === document.documentElement) target = document.body;
    }
    const seen = watch(target, lookOpts);
    keyEvents(target, k);
    return seen.with({ ok: true, changes: await seen.done(), aim: aimFor(target, { x: 0, y: 0 }) });
  }

  // The element the pointer was last moved onto by `hover` or a drag, so that moving it
  // elsewhere tells that one it was left (menus close on mouseleave).
  let pointerOn = null;

  // Moves the pointer onto `hit` at (x, y): out of and leave on what it was on (up to their
  // common ancestor), over and enter on the new, then a move.
  function movePointer(hit, x, y, buttons) {
    const view = hit.ownerDocument.defaultView;
    const base = { bubbles: true, cancelable: true, composed: true, view, clientX: x, clientY: y, buttons: buttons || 0 };
    const pointer = { ...base, pointerId: 1, pointerType: 'mouse', isPrimary: true };
    const old = pointerOn && pointerOn.isConnected && pointerOn.ownerDocument === hit.ownerDocument ? pointerOn : null;
    if (old !== hit) {
      const chain = (n) => {
        const out = [];
        for (let a = n; a && a.nodeType === Node.ELEMENT_NODE; a = composedParent(a) instanceof ShadowRoot ? composedParent(a).host : composedParent(a)) out.push(a);
        return out;
      };
      const newChain = chain(hit);
      if (old) {
        old.dispatchEvent(new view.PointerEvent('pointerout', { ...pointer, relatedTarget: hit }));
        old.dispatchEvent(new view.MouseEvent('mouseout', { ...base, relatedTarget: hit }));
        for (const a of chain(old).filter((a) => !newChain.includes(a))) {
          a.dispatchEvent(new view.PointerEvent('pointerleave', { ...pointer, bubbles: false, relatedTarget: hit }));
          a.dispatchEvent(new view.MouseEvent('mouseleave', { ...base, bubbles: false, relatedTarget: hit }));
        }
      }
      const oldChain = old ? chain(old) : [];
      hit.dispatchEvent(new view.PointerEvent('pointerover', { ...pointer, relatedTarget: old }));
      hit.dispatchEvent(new view.MouseEvent('mouseover', { ...base, relatedTarget: old }));
      for (const a of newChain.filter((a) => !oldChain.includes(a)).reverse()) {
        a.dispatchEvent(new view.PointerEvent('pointerenter', { ...pointer, bubbles: false, relatedTarget: old }));
        a.dispatchEvent(new view.MouseEvent('mouseenter', { ...base, bubbles: false, relatedTarget: old }));
      }
    }
    hit.dispatchEvent(new view.PointerEvent('pointermove', pointer));
    hit.dispatchEvent(new view.MouseEvent('mousemove', base));
    pointerOn = hit;
  }

  async function hover(el, lookOpts) {
    const blocked = usable(el);
    if (blocked) return blocked;
    const spot = aim(el);
    if (spot.err) return spot.err;
    const seen = watch(el, lookOpts);
    movePointer(spot.hit, spot.x, spot.y, 0);
    return seen.with({ ok: true, changes: await seen.done(), aim: aimFor(spot.hit, spot) });
  }

  // A right click as a mouse makes it: the right button's press (which opens the page's
  // `contextmenu`; Chrome on Linux fires it on the press), then its release. A page that
  // checks `event.isTrusted` ignores these; the worker then repeats it as real input.
  async function contextClick(el, lookOpts) {
    const blocked = usable(el);
    if (blocked) return blocked;
    const spot = aim(el);
    if (spot.err) return spot.err;
    const seen = watch(el, lookOpts);
    const { hit, x, y } = spot;
    const view = hit.ownerDocument.defaultView;
    const base = { bubbles: true, cancelable: true, composed: true, view, clientX: x, clientY: y, button: 2 };
    const pointer = { ...base, pointerId: 1, pointerType: 'mouse', isPrimary: true };
    movePointer(hit, x, y, 0);
    hit.dispatchEvent(new view.PointerEvent('pointerdown', { ...pointer, buttons: 2 }));
    hit.dispatchEvent(new view.MouseEvent('mousedown', { ...base, buttons: 2, detail: 1 }));
    hit.dispatchEvent(new view.MouseEvent('contextmenu', { ...base, buttons: 2, detail: 1 }));
    hit.dispatchEvent(new view.PointerEvent('pointerup', pointer));
    hit.dispatchEvent(new view.MouseEvent('mouseup', { ...base, detail: 1 }));
    return seen.with({ ok: true, changes: await seen.done(), aim: aimFor(hit, spot) });
  }

  // Where (x, y) of el's viewport lands: {hit, x, y} in the hit element's document.
  const landAt = (el, x, y) => {
    const root = rootPoint(el, x, y);
    const found = deepHit(root.doc, root.x, root.y);
    return found.hit ? found : { hit: el, x, y };
  };

  // A drag as a person's mouse makes it. An element the page made draggable (HTML5
  // drag-and-drop) gets dragstart, dragenter/dragover on what lies under the end point, drop
  // there when the page's dragover allowed it, and dragend, with one DataTransfer as the
  // browser passes; any other element gets a press, moves in steps and a release (sliders,
  // sortable lists and boards built on mouse or pointer events).
  async function drag(el, action, lookOpts) {
    const blocked = usable(el);
    if (blocked) return blocked;
    let toEl = null;
    if (action.to) {
      const r = resolve(action.to);
      if (r.err) return r.err;
      toEl = r.el;
    }
    const view = el.ownerDocument.defaultView;
    let spot = aim(el);
    if (spot.err) return spot.err;
    let end;
    if (toEl) {
      const tr = toEl.getBoundingClientRect();
      if (tr.top < 0 || tr.bottom > view.innerHeight || tr.left < 0 || tr.right > view.innerWidth) {
        toEl.scrollIntoView({ block: 'nearest', inline: 'nearest', behavior: 'instant' });
        spot = aim(el);
        if (spot.err) return spot.err;
      }
      const reached = reach(toEl);
      if (reached.covered && !composedContains(el, reached.covered)) {
        const by = describeCover(reached.covered, toEl);
        return { ...fail('covered', `the drop target is covered by ${by.role || by.tag} "${by.name}"`), by };
      }
      // Onto the target's visible part, in its quarter nearest the start (a sortable list
      // puts the item in the target's place once the pointer passed the target's middle).
      const r = toEl.getBoundingClientRect();
      const top = Math.max(r.top, 0);
      const bottom = Math.min(r.bottom, view.innerHeight);
      const fy = spot.y < top ? 0.75 : 0.25;
      end = { x: r.left + r.width / 2, y: top + (bottom - top) * (spot.y > bottom ? 0.25 : fy) };
      // A drop zone wants the item inside it: its centre.
      if (!sortableWith(el, toEl)) end.y = (top + bottom) / 2;
    } else if (Array.isArray(action.path)) {
      return dragAlong(el, spot, action.path, lookOpts);
    } else {
      end = { x: spot.x + (Number(action.dx) || 0), y: spot.y + (Number(action.dy) || 0) };
    }
    const seen = watch(el, lookOpts);
    const source = el.closest('[draggable="true"]') || (el.matches('a[href], img') && el.getAttribute('draggable') !== 'false' ? el : null);
    const box = pageBox(el);
    if (source) await dragAndDrop(source, spot, end, toEl);
    else await pointerDrag(spot, end, el);
    const changes = movedSince(el, box, await seen.done());
    const inside = toEl && !sortableWith(el, toEl) ? endedInside(el, toEl) : undefined;
    return seen.with({ ok: true, changes, inside, aim: aimFor(el, spot, end, !!source) });
  }

  const frame = () => new Promise((r) => setTimeout(r, 16));

  // Items of one list (a sortable list, a board's cards): dropped in the target's place, at
  // its quarter nearest the start. Anything else the item is dropped on is a zone.
  const SORTABLE_ITEM = 'li, tr, [role=option], [role=listitem], [role=row], [role=treeitem], [role=tab], [draggable="true"]';
  function sortableWith(el, toEl) {
    const a = el.closest(SORTABLE_ITEM) || el;
    const b = toEl.closest(SORTABLE_ITEM) || toEl;
    return a !== b && !!a.parentElement && a.parentElement === b.parentElement &&
      a.tagName === b.tagName && (explicitRole(a) || '') === (explicitRole(b) || '');
  }

  // An element's box in its document's page coordinates (a scroll does not move it).
  function pageBox(el) {
    const r = el.getBoundingClientRect();
    const v = el.ownerDocument.defaultView;
    return { x: r.left + v.scrollX, y: r.top + v.scrollY, w: r.width, h: r.height, t: el.getAttribute && el.getAttribute('transform') };
  }

  // The watch's changes, with `moved` when the dragged element's box (or an SVG shape's
  // transform) changed: a shape dragged by rewriting its transform changes no attribute the
  // watch reads on other elements, and a person sees it move.
  function movedSince(el, before, changes) {
    if (!el.isConnected) return changes;
    const now = pageBox(el);
    const shifted = Math.abs(now.x - before.x) >= 2 || Math.abs(now.y - before.y) >= 2 ||
      Math.abs(now.w - before.w) >= 2 || Math.abs(now.h - before.h) >= 2 || now.t !== before.t;
    return shifted ? { ...changes, moved: true } : changes;
  }

  // Whether a dragged item ended inside the zone it was dropped on: moved into it, or its
  // centre within the zone's box. Unknown (undefined) once the page replaced the item.
  function endedInside(el, zone) {
    if (!el.isConnected || !zone.isConnected) return undefined;
    if (composedContains(zone, el)) return true;
    const a = el.getBoundingClientRect();
    const z = zone.getBoundingClientRect();
    const cx = a.left + a.width / 2;
    const cy = a.top + a.height / 2;
    return cx >= z.left && cx <= z.right && cy >= z.top && cy <= z.bottom;
  }

  // A drag along a path of points (pixels from the element's top-left corner, as the model
  // gives them): press at the first, move through each (in steps of at most 8 px, so a
  // drawing gets a smooth stroke), release at the last. Draws a circle on a sketch pad,
  // traces a line on a map.
  async function dragAlong(el, spot, path, lookOpts) {
    const pts = path.filter((p) => Array.isArray(p) && p.length === 2 && p.every(Number.isFinite));
    if (pts.length < 2) return fail('bad-action', 'a path needs at least two [x, y] points');
    const r = el.getBoundingClientRect();
    const at = ([x, y]) => ({ x: r.left + x, y: r.top + y });
    const start = at(pts[0]);
    const first = landAt(el, start.x, start.y);
    const seen = watch(el, lookOpts);
    const box = pageBox(el);
    const view = first.hit.ownerDocument.defaultView;
    const ev = (x, y, buttons) => {
      const base = { bubbles: true, cancelable: true, composed: true, view, clientX: x, clientY: y, button: 0, buttons };
      return { base, pointer: { ...base, pointerId: 1, pointerType: 'mouse', isPrimary: true } };
    };
    movePointer(first.hit, start.x, start.y, 0);
    let e = ev(start.x, start.y, 1);
    if (first.hit.dispatchEvent(new view.PointerEvent('pointerdown', e.pointer))) first.hit.dispatchEvent(new view.MouseEvent('mousedown', { ...e.base, detail: 1 }));
    let under = first.hit;
    let last = start;
    for (const p of pts.slice(1)) {
      const to = at(p);
      const n = Math.max(1, Math.ceil(Math.hypot(to.x - last.x, to.y - last.y) / 8));
      for (let i = 1; i <= n; i++) {
        const x = last.x + ((to.x - last.x) * i) / n;
        const y = last.y + ((to.y - last.y) * i) / n;
        under = landAt(el, x, y).hit || under;
        e = ev(x, y, 1);
        under.dispatchEvent(new view.PointerEvent('pointermove', e.pointer));
        under.dispatchEvent(new view.MouseEvent('mousemove', e.base));
      }
      last = to;
      await frame();
    }
    e = ev(last.x, last.y, 0);
    under.dispatchEvent(new view.PointerEvent('pointerup', e.pointer));
    under.dispatchEvent(new view.MouseEvent('mouseup', { ...e.base, detail: 1 }));
    pointerOn = under;
    const changes = movedSince(el, box, await seen.done());
    return seen.with({ ok: true, changes, points: pts.length });
  }

  async function pointerDrag(spot, end, el) {
    const hit = spot.hit;
    const view = hit.ownerDocument.defaultView;
    const at = (x, y, buttons) => {
      const base = { bubbles: true, cancelable: true, composed: true, view, clientX: x, clientY: y, button: 0, buttons };
      return { base, pointer: { ...base, pointerId: 1, pointerType: 'mouse', isPrimary: true } };
    };
    movePointer(hit, spot.x, spot.y, 0);
    let e = at(spot.x, spot.y, 1);
    const down = hit.dispatchEvent(new view.PointerEvent('pointerdown', e.pointer));
    if (down) hit.dispatchEvent(new view.MouseEvent('mousedown', { ...e.base, detail: 1 }));
    const STEPS = 12;
    let under = hit;
    for (let i = 1; i <= STEPS; i++) {
      const x = spot.x + ((end.x - spot.x) * i) / STEPS;
      const y = spot.y + ((end.y - spot.y) * i) / STEPS;
      await frame();
      under = landAt(el, x, y).hit || hit;
      e = at(x, y, 1);
      under.dispatchEvent(new view.PointerEvent('pointermove', e.pointer));
      under.dispatchEvent(new view.MouseEvent('mousemove', e.base));
    }
    e = at(end.x, end.y, 0);
    under.dispatchEvent(new view.PointerEvent('pointerup', e.pointer));
    under.dispatchEvent(new view.MouseEvent('mouseup', { ...e.base, detail: 1 }));
    pointerOn = under;
  }

  async function dragAndDrop(source, spot, end, toEl) {
    const view = source.ownerDocument.defaultView;
    const dt = new view.DataTransfer();
    const ev = (type, x, y, target) => {
      const init = { bubbles: true, cancelable: !['dragleave', 'dragend'].includes(type), composed: true, view, clientX: x, clientY: y, dataTransfer: dt };
      return target.dispatchEvent(new view.DragEvent(type, init));
    };
    movePointer(spot.hit, spot.x, spot.y, 0);
    const base = { bubbles: true, cancelable: true, composed: true, view, clientX: spot.x, clientY: spot.y, button: 0, buttons: 1 };
    spot.hit.dispatchEvent(new view.PointerEvent('pointerdown', { ...base, pointerId: 1, pointerType: 'mouse', isPrimary: true }));
    spot.hit.dispatchEvent(new view.MouseEvent('mousedown', { ...base, detail: 1 }));
    if (!ev('dragstart', spot.x, spot.y, source)) return;
    // A drag that starts ends the pointer's press, as the browser does.
    spot.hit.dispatchEvent(new view.PointerEvent('pointercancel', { ...base, buttons: 0, pointerId: 1, pointerType: 'mouse', isPrimary: true }));
    await frame();
    let over = null;
    let allowed = false;
    const STEPS = 4;
    for (let i = 1; i <= STEPS; i++) {
      const x = spot.x + ((end.x - spot.x) * i) / STEPS;
      const y = spot.y + ((end.y - spot.y) * i) / STEPS;
      let under = landAt(source, x, y).hit;
      if (i === STEPS && toEl && !composedContains(toEl, under)) under = toEl;
      ev('drag', x, y, source);
      if (under !== over) {
        if (under) ev('dragenter', x, y, under);
        if (over) ev('dragleave', x, y, over);
        over = under;
      }
      // A page allows a drop by canceling dragover.
      allowed = over ? !ev('dragover', x, y, over) : false;
      await frame();
    }
    if (over && allowed) ev('drop', end.x, end.y, over);
    else if (over) ev('dragleave', end.x, end.y, over);
    ev('dragend', end.x, end.y, source);
  }

  // A slider's value as the page shows it: aria-valuenow of the handle or its track, else a
  // number field or <output> next to it (a jQuery UI slider writes its value into a field).
  function sliderValue(handle, track) {
    for (const n of [handle, track]) {
      const v = n && n.getAttribute('aria-valuenow');
      if (v !== null && v !== undefined && v !== '' && Number.isFinite(Number(v))) return Number(v);
    }
    for (let box = track || handle, depth = 0; box && depth < 3; box = box.parentElement, depth++) {
      for (const f of box.querySelectorAll('input, output')) {
        if (f === handle || f.type === 'range') continue;
        const m = String(f.value).replace(/[^\d.-]/g, '');
        if (m !== '' && Number.isFinite(Number(m))) return Number(m);
      }
    }
    return null;
  }

  // A slider's value shown as text beside it (`<span class="value">98</span>`), when the
  // slider says it nowhere else: a live region, a status, an element named for the value.
  function shownValue(track) {
    const SHOWN = 'output, [aria-live], [role=status], [class*=value], [id*=value], [class*=amount], [id*=amount], [class*=current]';
    for (let box = track.parentElement, depth = 0; box && depth < 3; box = box.parentElement, depth++) {
      for (const n of box.querySelectorAll(SHOWN)) {
        if (n === track || n.contains(track) || track.contains(n)) continue;
        const t = n.textContent.trim();
        const m = t.length <= 24 ? t.replace(/[^\d.-]/g, '') : '';
        if (m !== '' && Number.isFinite(Number(m))) return Number(m);
      }
    }
    return null;
  }

  // The slider's range, from aria-valuemin/max (or min/max attributes) on the handle or its
  // track; null when it does not say.
  function rangeOf(handle, track) {
    for (const n of [handle, track]) {
      const lo = Number(n.getAttribute('aria-valuemin') ?? n.getAttribute('min') ?? NaN);
      const hi = Number(n.getAttribute('aria-valuemax') ?? n.getAttribute('max') ?? NaN);
      if (Number.isFinite(lo) && Number.isFinite(hi) && hi > lo) return { lo, hi };
    }
    return null;
  }

  // Drags the handle to where `wanted` lies in the slider's range, then corrects by the gap
  // it shows (up to three times): {f, value} where it ended, or null when the range or the
  // value cannot be read.
  async function dragToRange(handle, track, vertical, wanted, readValue) {
    const range = rangeOf(handle, track);
    if (!range) return null;
    const tr = track.getBoundingClientRect();
    let f = Math.min(Math.max((wanted - range.lo) / (range.hi - range.lo), 0), 1);
    let out = null;
    for (let i = 0; i < 4; i++) {
      const h = handle.getBoundingClientRect();
      const from = { hit: handle, x: h.left + h.width / 2, y: h.top + h.height / 2 };
      const to = vertical ? { x: from.x, y: tr.bottom - tr.height * f } : { x: tr.left + tr.width * f, y: from.y };
      await pointerDrag(from, to, handle);
      const now = readValue();
      if (now === null) return out;
      out = { f, value: now };
      if (now === wanted) break;
      f = Math.min(Math.max(f + (wanted - now) / (range.hi - range.lo), 0), 1);
    }
    return out;
  }

  async function setValue(el, action, lookOpts) {
    const wanted = Number(action.value);
    if (!Number.isFinite(wanted)) return fail('bad-action', 'the value is not a number');
    const blocked = usable(el);
    if (blocked) return blocked;
    if (isTextField(el) && el.type !== 'number') return fail('bad-action', 'this is a text field: type into it instead');
    const spot = aim(el);
    if (spot.err) return spot.err;
    const seen = watch(el, lookOpts);
    const done = async (value) =>
      seen.with({ ok: true, value: value === null ? undefined : String(value), accepted: value !== null && Math.abs(value - wanted) < 1e-9, changes: await seen.done(['value']) });
    if (el.tagName === 'INPUT' && (el.type === 'range' || el.type === 'number')) {
      pressInto(el, spot);
      setNativeValue(el, String(wanted));
      fire(el, 'input');
      fire(el, 'change');
      return done(Number(el.value));
    }
    // An ARIA slider takes keys, as a keyboard user moves it.
    const role = explicitRole(el);
    const handle = role === 'slider' ? (el.querySelector('[class*=handle], [class*=thumb]') || el) : el.querySelector('[role=slider], [class*=handle], [class*=thumb]') || el;
    const track = handle === el ? (el.parentElement || el) : el;
    const readValue = () => { const v = sliderValue(handle, track); return v === null ? shownValue(track) : v; };
    let value = readValue();
    if (value !== null && (handle.tabIndex >= 0 || handle.hasAttribute('tabindex'))) {
      handle.focus({ preventScroll: true });
      for (let i = 0; i < 400 && value !== wanted; i++) {
        keyEvents(handle, parseKey(value < wanted ? 'ArrowRight' : 'ArrowLeft'));
        const now = readValue();
        // Overshot (a step larger than the gap) or no answer to keys: stop here.
        if (now === null || now === value || (value < wanted) !== (now < wanted) && now !== wanted) {
          value = now === null ? value : now;
          break;
        }
        value = now;
      }
      if (value === wanted) return done(value);
    }
    // A custom handle: dragged along its track, the value read back after each drag, the
    // position found by halving the interval (the value grows left to right on a
    // horizontal track, bottom to top on a vertical one).
    const tr = track.getBoundingClientRect();
    const vertical = tr.height > tr.width * 1.5;
    let lo = 0;
    let hi = 1;
    let best = { value, gap: value === null ? Infinity : Math.abs(value - wanted) };
    // With the slider's range known (aria-valuemin/max, min/max), first straight to where the
    // value lies and corrected from what it shows; the halving below finishes the job.
    const aimed = await dragToRange(handle, track, vertical, wanted, readValue);
    if (aimed) {
      if (Math.abs(aimed.value - wanted) < best.gap) best = { value: aimed.value, gap: Math.abs(aimed.value - wanted) };
      if (aimed.value === wanted) return done(aimed.value);
      if (aimed.value < wanted) lo = aimed.f;
      else hi = aimed.f;
    }
    for (let i = 0; i < 14; i++) {
      const f = (lo + hi) / 2;
      const h = handle.getBoundingClientRect();
      const from = { hit: handle, x: h.left + h.width / 2, y: h.top + h.height / 2 };
      const to = vertical ? { x: from.x, y: tr.bottom - tr.height * f } : { x: tr.left + tr.width * f, y: from.y };
      await pointerDrag(from, to, handle);
      const now = readValue();
      if (now === null) break;
      if (Math.abs(now - wanted) < best.gap) best = { value: now, gap: Math.abs(now - wanted) };
      if (now === wanted) break;
      if (now < wanted) lo = f;
      else hi = f;
    }
    return done(best.value === undefined ? null : best.value);
  }

  // Selects the first occurrence of `text` in el (exactly, else ignoring case and runs of
  // spaces), as a person's drag across it would: a Range in the document's selection, or the
  // field's own selection.
  async function selectText(el, action, lookOpts) {
    const wanted = String(action.text ?? '');
    if (!wanted.trim()) return fail('bad-action', 'no text to select');
    if (!el) el = passageHolder(wanted);
    if (!el) return fail('not-found', `the page does not show "${wanted.slice(0, 60)}"`);
    const spot = aim(el);
    if (spot.err) return spot.err;
    const doc = el.ownerDocument;
    const find = (hay) => {
      let i = hay.indexOf(wanted);
      if (i >= 0) return [i, i + wanted.length];
      const pattern = new RegExp(wanted.trim().split(/\s+/).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+'), 'i');
      const m = pattern.exec(hay);
      return m ? [m.index, m.index + m[0].length] : null;
    };
    const seen = watch(el, lookOpts);
    if (isTextField(el)) {
      const at = find(el.value);
      if (!at) return fail('not-found', `the field does not contain "${wanted.slice(0, 60)}"`);
      el.focus({ preventScroll: true });
      el.setSelectionRange(at[0], at[1]);
      return seen.with({ ok: true, changes: await seen.done() });
    }
    const nodes = [];
    let hay = '';
    const walker = doc.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      nodes.push([n, hay.length]);
      hay += n.data;
    }
    const at = find(hay);
    if (!at) return fail('not-found', `the element does not contain "${wanted.slice(0, 60)}"`);
    const point = (offset, isEnd) => {
      for (let i = nodes.length - 1; i >= 0; i--) {
        const [n, start] = nodes[i];
        if (start < offset || (start === offset && !isEnd) || i === 0) return [n, Math.min(offset - start, n.data.length)];
      }
      return [nodes[0][0], 0];
    };
    const editable = editableRoot(el) || (el.querySelector('[contenteditable]') && el.querySelector('[contenteditable]'));
    if (editable && deepActive(doc) !== editable) editable.focus({ preventScroll: true });
    const range = doc.createRange();
    range.setStart(...point(at[0], false));
    range.setEnd(...point(at[1], true));
    const sel = doc.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    return seen.with({ ok: true, text: cap(collapse(sel.toString()), TEXT_CAP), changes: await seen.done() });
  }

  // A click at a point of el's box given as fractions (thousandths) of its width and height:
  // a chart's bar, a map's region, a canvas drawing. Something else on top there is reported.
  async function clickAt(el, action, lookOpts) {
    const blocked = usable(el);
    if (blocked) return blocked;
    const r = el.getBoundingClientRect();
    const fx = Math.min(Math.max(Number(action.x) / 1000, 0), 1);
    const fy = Math.min(Math.max(Number(action.y) / 1000, 0), 1);
    const x = r.left + r.width * fx;
    const y = r.top + r.height * fy;
    const view = el.ownerDocument.defaultView;
    if (x < 0 || y < 0 || x > view.innerWidth || y > view.innerHeight) return fail('not-visible', 'that point of the element is outside the window');
    const found = landAt(el, x, y);
    showMark(el);
    if (relation(el, found.hit) === 'covered') {
      const by = describeCover(found.hit, el);
      return { ...fail('covered', `the point is covered by ${by.role || by.tag} "${by.name}"`), by };
    }
    const seen = watch(el, lookOpts);
    pointerSequence(found.hit, found.x, found.y, true);
    return seen.with({ ok: true, changes: await seen.done() });
  }

  // Scrolls the contents of el (or of its nearest scrollable ancestor): a page up or down,
  // or to the end, firing the page's scroll listeners as a person's wheel would.
  async function scrollIn(el, action, lookOpts) {
    const box = scrollerOf(el) || [...el.querySelectorAll('*')].find((n) => scrollerOf(n) === n) || null;
    if (!box) return fail('bad-action', 'nothing inside this element scrolls; scroll the page instead');
    const before = box.scrollTop;
    const seen = watch(box, lookOpts);
    const how = action.direction === 'end' ? 'end' : action.direction === 'up' ? 'up' : 'down';
    box.dispatchEvent(new (box.ownerDocument.defaultView.WheelEvent)('wheel', { bubbles: true, cancelable: true, deltaY: how === 'up' ? -box.clientHeight : box.clientHeight }));
    scrollBox(box, box.ownerDocument.defaultView, how);
    // Scroll events come with the next frame: the watch sees what they unlock.
    return seen.with({
      ok: true,
      moved: Math.round(box.scrollTop - before) !== 0,
      atTop: box.scrollTop <= 0,
      atBottom: box.scrollTop + box.clientHeight >= box.scrollHeight - 1,
      changes: await seen.done(),
    });
  }

  // Resolves once `text` (ignoring case and runs of spaces) is in the page's visible text,
  // or after `ms` (at most 10 s).
  function waitText(action) {
    const wanted = collapse(action.text).toLowerCase();
    const ms = Math.min(Math.max(Number(action.ms) || 0, 0), 10000);
    const has = () => collapse(document.body ? document.body.innerText : '').toLowerCase().includes(wanted);
    const start = performance.now();
    return new Promise((done) => {
      const tick = () => {
        if (has()) done({ ok: true, found: true });
        else if (performance.now() - start >= ms) done({ ok: true, found: false });
        else setTimeout(tick, 100);
      };
      tick();
    });
  }

  // ---- timing: what a person follows between two looks ---------------------------------

  // A wait that watches: what changed on the page during `ms`, in order, each as "what:
  // how" with its time (`cell 3: lit at 0.3 s`), so that a sequence shown in quick blinks
  // (a memory game) can be followed although the model looks only once the wait is over.
  // Only what a person sees: a class or state that came on, an element shown, a new text.
  const RECORD_CAP = 40;
  function recordOf(n) {
    const el = n.nodeType === Node.ELEMENT_NODE ? n : n.parentElement;
    if (!el || ownNodes.has(el)) return '';
    const role = explicitRole(el) || implicitRole(el);
    let name = clean(accessibleName(el, role) || '', 40);
    if (!name && el.id) name = '#' + el.id;
    if (!name) {
      const parent = el.parentElement;
      const rank = parent ? [...parent.children].indexOf(el) + 1 : 1;
      name = `${role || el.tagName.toLowerCase()} ${rank}`;
    }
    return name;
  }
  function record(action) {
    const ms = Math.min(Math.max(Number(action.ms) || 0, 0), 10000);
    const start = performance.now();
    const seen = [];
    const per = new Map();
    const note = (el, what) => {
      const who = recordOf(el);
      if (!who || !what) return;
      const count = (per.get(who) || 0) + 1;
      per.set(who, count);
      if (count > 6) return; // a caret or a clock: said once as "kept changing"
      const at = (performance.now() - start) / 1000;
      const line = `${who}: ${count === 6 ? 'kept changing' : what}`;
      if (seen.length && seen[seen.length - 1].line === line) return;
      if (seen.length < RECORD_CAP) seen.push({ line, at });
    };
    const observer = new MutationObserver((records) => {
      for (const r of records) {
        if (ownNodes.has(r.target)) continue;
        if (r.type === 'attributes') {
          const el = r.target;
          if (r.attributeName === 'class') {
            const was = new Set(String(r.oldValue || '').split(/\s+/).filter(Boolean));
            const on = [...el.classList].filter((c) => !was.has(c));
            if (on.length) note(el, on.join(' '));
          } else if (r.attributeName === 'hidden' && !el.hidden) {
            note(el, 'shown');
          } else if (/^aria-(pressed|selected|checked|current|expanded)$/.test(r.attributeName) && el.getAttribute(r.attributeName) === 'true') {
            note(el, r.attributeName.slice(5));
          } else if (r.attributeName === 'style' && shown(el) && /hidden|none/.test(String(r.oldValue || ''))) {
            note(el, 'shown');
          }
        } else if (r.type === 'characterData') {
          note(r.target, clean(r.target.data, 40));
        } else {
          for (const n of r.addedNodes) {
            if (n.nodeType === Node.TEXT_NODE && n.data.trim()) note(r.target, clean(n.data, 40));
            else if (n.nodeType === Node.ELEMENT_NODE && !ownNodes.has(n)) note(n, 'appeared');
          }
        }
      }
    });
    observer.observe(document, { subtree: true, childList: true, attributes: true, attributeOldValue: true, characterData: true });
    return new Promise((done) => setTimeout(() => {
      observer.takeRecords();
      observer.disconnect();
      done({ ok: true, seen: seen.map((x) => `${x.line} at ${x.at.toFixed(1)} s`) });
    }, ms));
  }

  // Quick repeated clicks on one target by its role and name (a button that jumps away after
  // each hit, a whack-a-mole): found again before each click (the page may have moved or
  // replaced it), clicked where it is then, a frame apart. Says how many clicks landed.
  function findAgain(doc, tag, role, name) {
    for (const c of doc.getElementsByTagName(tag)) {
      if (!shown(c)) continue;
      const r = explicitRole(c) || implicitRole(c);
      if (r === role && clean(accessibleName(c, r) || '', NAME_CAP) === name) return c;
    }
    return null;
  }
  async function clickTimes(el, action, lookOpts) {
    const times = Math.min(Math.max(Math.floor(Number(action.times)) || 1, 1), 50);
    const blocked = usable(el);
    if (blocked) return blocked;
    const doc = el.ownerDocument;
    const role = explicitRole(el) || implicitRole(el);
    const name = clean(accessibleName(el, role) || '', NAME_CAP);
    const tag = el.tagName;
    const seen = watch(el, lookOpts);
    let clicks = 0;
    let target = el;
    for (let i = 0; i < times; i++) {
      if (i) await frame();
      if (!target.isConnected || !shown(target)) target = findAgain(doc, tag, role, name);
      if (!target || isDisabled(target)) continue;
      const spot = reach(target);
      if (spot.covered) continue;
      const r = target.getBoundingClientRect();
      const hit = spot.hit || target;
      pointerSequence(hit, spot.hit ? spot.x : r.left + r.width / 2, spot.hit ? spot.y : r.top + r.height / 2, true);
      clicks++;
    }
    return seen.with({ ok: true, clicks, changes: await seen.done() });
  }

  function scrollPage(direction) {
    const before = window.scrollY;
    const scroller = document.scrollingElement || document.documentElement;
    if (direction === 'end') {
      window.scrollTo({ top: scroller.scrollHeight, behavior: 'instant' });
    } else {
      const dy = Math.round(window.innerHeight * 0.85) * (direction === 'up' ? -1 : 1);
      window.scrollBy({ top: dy, behavior: 'instant' });
    }
    return {
      ok: true,
      scroll: { x: Math.round(window.scrollX), y: Math.round(window.scrollY) },
      moved: Math.round(window.scrollY - before) !== 0,
      atTop: window.scrollY <= 0,
      atBottom: window.scrollY + window.innerHeight >= scroller.scrollHeight - 1,
    };
  }

  function read(el, action) {
    const max = Number(action.maxChars) > 0 ? Number(action.maxChars) : 4000;
    if (isSensitive(el)) return { ok: true, text: '' };
    const isField = el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT';
    // Verbatim: a field's value exactly as it is (a trailing space, several spaces), an
    // element's text as rendered (line breaks, preformatted spacing): a task that copies an
    // exact value needs it, and the worker fences it as page text either way.
    const raw = isField ? el.value : el.innerText || el.textContent || '';
    return { ok: true, text: cap(String(raw), max) };
  }

  function highlight(el, action) {
    const doc = el.ownerDocument;
    const r = el.getBoundingClientRect();
    const host = doc.createElement('div');
    ownNodes.add(host);
    host.setAttribute('aria-hidden', 'true');
    // A closed shadow root keeps the page's CSS from restyling the overlay and page scripts
    // from finding into it.
    const shadow = host.attachShadow({ mode: 'closed' });
    const box = doc.createElement('div');
    box.style.cssText = [
      'position:fixed', `left:${r.left - 3}px`, `top:${r.top - 3}px`,
      `width:${r.width + 6}px`, `height:${r.height + 6}px`,
      'border:3px solid #7c3aed', 'border-radius:4px', 'box-sizing:border-box',
      'background:rgba(124,58,237,0.12)', 'pointer-events:none', 'z-index:2147483647',
    ].join(';');
    shadow.append(box);
    host.style.cssText = 'all:initial;pointer-events:none';
    doc.documentElement.append(host);
    const ms = Number(action.ms) > 0 ? Math.min(Number(action.ms), 10000) : 1500;
    setTimeout(() => host.remove(), ms);
    return { ok: true };
  }

  // Resolves once the document has had no DOM mutation for `quietMs` and shows nothing still
  // loading (`busyIn`), or after `capMs`: the wait after a navigation. A page that renders
  // after its load event (a single-page app fetching its content) gets its time, a static
  // page is done after `quietMs`. While such a page waits on the network its DOM is still,
  // so stillness alone ended the wait on its spinner.
  function settle(quietMs, capMs) {
    return new Promise((resolve) => {
      const start = performance.now();
      let last = start;
      const observer = new MutationObserver(() => { last = performance.now(); });
      try {
        observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      } catch (_) { resolve(0); return; }
      const tick = () => {
        const now = performance.now();
        if ((now - last >= quietMs && busyIn(document).length === 0) || now - start >= capMs) {
          observer.disconnect();
          resolve(Math.round(now - start));
        } else {
          setTimeout(tick, Math.max(20, quietMs - (now - last)));
        }
      };
      setTimeout(tick, quietMs);
    });
  }

  // act(handle, {op, ...}); `handle` is null for page-level scrolling. Never throws: every
  // outcome is a JSON-serialisable {ok: true, ...} or {ok: false, error, message}. Click, type
  // and select return a promise of it (executeScript waits for it): they watch the page for
  // a moment to say what the action changed.
  const exception = (e) => fail('exception', String((e && e.message) || e));

  // `lookOpts`: see `watch`. `mark`: a highlight command for the element (see `aim`).
  // `expect`: the handle comes from the last snapshot, which must still hold: anything
  // changed since (`unchanged`) and nothing is done ('changed'), so that the worker need not
  // ask in a call of its own first. `ticket`: the look this act's watch takes is handed to
  // `lookOf(ticket)` as soon as it is taken (see `watch`).
  function act(handle, action, lookOpts, mark, expect, ticket) {
    // Only the newest act's look is waited for: older tickets get nothing.
    for (const [t, slot] of looksOut) {
      if (t !== ticket) {
        slot.resolve(null);
        looksOut.delete(t);
      }
    }
    const look = ticket === undefined || ticket === null ? null : lookSlot(ticket);
    const end = (r) => {
      if (look) look.resolve(null); // no look taken, or one taken after the first
      return r;
    };
    if (expect && !unchanged()) return end(fail('changed', 'the page changed since the last look; nothing was done'));
    let outcome;
    acting = { mark: mark && mark.op === 'highlight' ? mark : null, look };
    try {
      outcome = actNow(handle, action, lookOpts);
    } finally {
      acting = NOT_ACTING;
    }
    return outcome instanceof Promise ? outcome.catch(exception).then(end) : end(outcome);
  }

  // Looks handed out before their act returns, by ticket: `lookOf` resolves with the first
  // look the act's watch takes (JSON), or null when it takes none, so that the worker reads
  // it while the watch goes on. The act's own result then says whether that look still held
  // when the watch ended (`lookKept`), or carries the one taken after it.
  const looksOut = new Map();
  // What the act running now carries to where it is used, deep inside it: the highlight
  // `mark` (see `aim`; taken once shown) and the `look` slot its watch hands its first look
  // to. Set for the synchronous part of `act`, where every action aims and starts its watch.
  const NOT_ACTING = Object.freeze({ mark: null, look: null });
  let acting = NOT_ACTING;
  function lookSlot(ticket) {
    let slot = looksOut.get(ticket);
    if (!slot) {
      let resolve;
      const promise = new Promise((r) => { resolve = r; });
      slot = { promise, resolve };
      looksOut.set(ticket, slot);
    }
    return slot;
  }
  function lookOf(ticket) {
    // Asked before or after the act began: the worker sends both calls at once.
    return lookSlot(ticket).promise.then((look) => {
      looksOut.delete(ticket);
      return look;
    });
  }

  function actNow(handle, action, lookOpts) {
    let target = null;
    try {
      const op = action && action.op;
      if (handle === null || handle === undefined) {
        if (op === 'scroll') return scrollPage(action.direction);
        if (op === 'press') return press(null, action, lookOpts);
        if (op === 'selectText') return selectText(null, action, lookOpts);
        if (op === 'waitText') return waitText(action);
        if (op === 'record') return record(action);
        if (op === 'observe') return observe(document.body);
        if (op === 'collect') return collect();
      }
      const { el, err } = resolve(handle);
      if (err) return err;
      target = el;
      switch (op) {
        case 'click': return click(el, lookOpts);
        case 'type': return type(el, action, lookOpts);
        case 'select': return selectOption(el, action, lookOpts);
        case 'scroll': reveal(el); return { ok: true };
        case 'read': return read(el, action);
        case 'press': return press(el, action, lookOpts);
        case 'hover': return hover(el, lookOpts);
        case 'drag': return drag(el, action, lookOpts);
        case 'setValue': return setValue(el, action, lookOpts);
        case 'selectText': return selectText(el, action, lookOpts);
        case 'clickAt': return clickAt(el, action, lookOpts);
        case 'scrollIn': return scrollIn(el, action, lookOpts);
        case 'observe': return observe(el);
        case 'collect': return collect();
        case 'highlight': return highlight(el, action);
        case 'contextClick': return contextClick(el, lookOpts);
        case 'dragPath': return drag(el, action, lookOpts);
        case 'clickTimes': return clickTimes(el, action, lookOpts);
        default: return fail('bad-action', `unknown op ${JSON.stringify(op)}`);
      }
    } catch (e) {
      return exception(e);
    } finally {
      // Each action aims before its first wait, so by now the mark is shown if it ever aimed.
      if (target) showMark(target);
    }
  }

  Object.defineProperty(globalThis, '__tandemDriver', {
    value: Object.freeze({ version: VERSION, docId, snapshot, unchanged, act, lookOf, settle }),
    configurable: true,
    enumerable: false,
    writable: false,
  });

  // The script's value, which Chrome hands back per frame with its documentId: whether the
  // listener recorder runs in this new document's page world (it cancels a cancelable
  // LISTENER_SCAN). The worker then gives the recorder late only where it is missing, without
  // a second injection to ask (that round trip delayed each task's first look). A document
  // whose driver was already there answers nothing (`undefined` above): the worker asks.
  const asked = new Event(LISTENER_SCAN, { cancelable: true });
  try {
    document.dispatchEvent(asked);
  } catch (_) { /* no answer: counted as no recorder */ }
  return asked.defaultPrevented;
})();
