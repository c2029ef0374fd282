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

  const VERSION = 1;
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
    maxElements: 1500, // candidates reported; beyond that `truncated` is set
    maxNodes: 30000, // elements visited; bounds the cost on huge pages
    maxText: 0, // characters of page text (0 = none)
    includeHidden: false, // also report candidates that are not rendered
  };
  const NAME_CAP = 120;
  const TEXT_CAP = 200;
  const CONTEXT_CAP = 100;
  const ATTR_CAP = 200;
  const OPTIONS_CAP = 50;

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
  const KEY_ATTRS = [
    'id', 'name', 'type', 'placeholder', 'href', 'autocomplete', 'title', 'alt', 'for',
    'inputmode', 'pattern', 'maxlength', 'min', 'max', 'step', 'multiple', 'required', 'readonly',
  ];
  const PAYMENT_AUTOCOMPLETE = /\bcc-(number|csc|exp|exp-month|exp-year|name|type)\b/i;

  const collapse = (s) => String(s ?? '').replace(/\s+/g, ' ').trim();
  const cap = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
  const clean = (s, n) => cap(collapse(s), n);

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
    return role ? role.split(/\s+/)[0] : null;
  }

  // Text of a subtree as a screen reader would read it: img alt included, aria-hidden and
  // script/style skipped. Stops early once `limit` characters are collected.
  function contentText(node, limit, skip) {
    let out = '';
    const visit = (n) => {
      if (out.length >= limit || n === skip) return;
      if (n.nodeType === Node.TEXT_NODE) {
        out += n.data;
        return;
      }
      if (n.nodeType === Node.DOCUMENT_FRAGMENT_NODE) {
        for (const c of n.childNodes) visit(c); // a shadow root reached as an ancestor
        return;
      }
      if (n.nodeType !== Node.ELEMENT_NODE) return;
      if (SKIP_TAGS.has(n.tagName) || n.getAttribute('aria-hidden') === 'true') return;
      if (n.tagName === 'IMG' || (n.tagName === 'INPUT' && n.type === 'image')) {
        out += ' ' + (n.getAttribute('alt') || '') + ' ';
        return;
      }
      const block = BLOCK_TAGS.has(n.tagName);
      // Block boundaries separate words ("Price" + "$35" must not read "Price$35"); inline
      // ones must not split them ("c<b>art</b>" is one word).
      if (block) out += ' ';
      const children =
        n.tagName === 'SLOT' ? n.assignedNodes({ flatten: true })
          : n.shadowRoot ? n.shadowRoot.childNodes : n.childNodes;
      for (const c of children) visit(c);
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
      .map((ref) => contentText(ref, NAME_CAP * 2))
      .join(' ');
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
    if (el.labels && el.labels.length) {
      const t = collapse([...el.labels].map((l) => contentText(l, NAME_CAP * 2, el)).join(' '));
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
      const t = contentText(el, NAME_CAP * 2);
      if (t) return t;
    }
    const title = collapse(el.getAttribute('title'));
    if (title) return title;
    return collapse(el.getAttribute('placeholder'));
  }

  function interactivity(el, role, style, parentStyle) {
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
    if (el.hasAttribute('tabindex') && el.tabIndex >= 0) hints.push('tabindex');
    // Only where the pointer cursor starts: descendants inherit it and are not separate targets.
    if (style.cursor === 'pointer' && (!parentStyle || parentStyle.cursor !== 'pointer')) {
      hints.push('pointer');
    }
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) {
      hints.push('editable');
    }
    return hints;
  }

  function isSensitive(el) {
    if (el.tagName !== 'INPUT' && el.tagName !== 'TEXTAREA') return false;
    return el.type === 'password' || PAYMENT_AUTOCOMPLETE.test(el.getAttribute('autocomplete') || '');
  }

  function attributesOf(el) {
    const attrs = {};
    for (const name of KEY_ATTRS) {
      const v = el.getAttribute(name);
      if (v !== null) attrs[name] = cap(collapse(v), ATTR_CAP);
    }
    for (const a of el.attributes) {
      if (a.name.startsWith('aria-')) attrs[a.name] = cap(collapse(a.value), ATTR_CAP);
    }
    // Never a password's value, nor a card's: the snapshot goes to an LLM.
    const hasValue = el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT';
    // A checkbox's value is what the form submits, not state: `checked` carries that.
    const stateless = ['hidden', 'checkbox', 'radio'].includes(el.type);
    if (hasValue && !isSensitive(el) && !stateless && el.value !== '') {
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
    if (style.visibility !== 'visible') return false;
    if (!el.checkVisibility) return true;
    // Both spellings: the option names changed in Chrome 121.
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

  function optionsOf(el) {
    if (el.tagName !== 'SELECT') return undefined;
    return [...el.options].slice(0, OPTIONS_CAP).map((o) => ({
      value: cap(o.value, ATTR_CAP),
      text: clean(o.text, NAME_CAP),
      selected: o.selected,
    }));
  }

  function snapshot(opts) {
    const o = { ...DEFAULTS, ...(opts || {}) };
    const top = { w: window.innerWidth, h: window.innerHeight };
    const elements = [];
    const frames = [];
    const forms = new Map();
    let visited = 0;
    let truncated = false;

    // Forget handles whose elements were collected, so the map does not grow forever.
    for (const [h, ref] of elementOf) if (!ref.deref()) elementOf.delete(h);

    const formIndex = (el) => {
      const form = el.form || el.closest('form');
      if (!form) return null;
      if (!forms.has(form)) forms.set(form, forms.size);
      return forms.get(form);
    };

    // `offset` turns frame-local coordinates into the top document's.
    const walkRoot = (root, framePath, offset) => {
      const walker = (root.ownerDocument || root).createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
      let frameCounter = 0;
      let node = walker.nextNode();
      while (node) {
        if (++visited > o.maxNodes || elements.length >= o.maxElements) {
          truncated = true;
          return;
        }
        const el = node;
        if (SKIP_TAGS.has(el.tagName) || ownNodes.has(el)) {
          node = skipSubtree(walker);
          continue;
        }
        const view = el.ownerDocument.defaultView;
        const style = view.getComputedStyle(el);
        if (style.display === 'none' && !o.includeHidden) {
          node = skipSubtree(walker);
          continue;
        }
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
          if (doc && doc.documentElement) walkRoot(doc.documentElement, path, inner);
        }
        node = walker.nextNode();
      }
    };

    const skipSubtree = (walker) => {
      let n = walker.nextSibling();
      while (!n && walker.parentNode()) n = walker.nextSibling();
      return n;
    };

    const visit = (el, style, framePath, offset) => {
      const parent = el.parentElement || (el.parentNode && el.parentNode.host) || null;
      const parentStyle = parent ? el.ownerDocument.defaultView.getComputedStyle(parent) : null;
      const explicit = explicitRole(el);
      const implicit = implicitRole(el);
      const role = explicit || implicit;
      const hints = interactivity(el, role, style, parentStyle);
      if (!hints.length) return;
      const r = el.getBoundingClientRect();
      const visible = isVisible(el, style, r);
      if (!visible && !o.includeHidden) return;
      const bbox = {
        x: Math.round(r.left + offset.x),
        y: Math.round(r.top + offset.y),
        width: Math.round(r.width),
        height: Math.round(r.height),
      };
      const inViewport =
        visible && bbox.x < top.w && bbox.y < top.h && bbox.x + bbox.width > 0 && bbox.y + bbox.height > 0;
      const isField = el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT';
      const item = {
        handle: handleFor(el),
        frame: framePath,
        tag: el.tagName.toLowerCase(),
        role: explicit,
        implicitRole: implicit,
        name: clean(accessibleName(el, role), NAME_CAP),
        text: isField ? '' : clean(el.innerText || el.textContent || '', TEXT_CAP),
        context: contextOf(el),
        attrs: attributesOf(el),
        bbox,
        visible,
        inViewport,
        interactive: hints,
        disabled: isDisabled(el),
        checked: checkedOf(el),
        form: formIndex(el),
        shadow: el.getRootNode() instanceof ShadowRoot,
      };
      const options = optionsOf(el);
      if (options) item.options = options;
      elements.push(item);
    };

    walkRoot(document.documentElement, [], { x: 0, y: 0 });

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
    };
    if (o.maxText > 0) {
      result.text = cap(collapse(document.body ? document.body.innerText : ''), o.maxText);
    }
    return result;
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

  function center(el) {
    const r = el.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2, r };
  }

  function checkVisible(el) {
    const style = el.ownerDocument.defaultView.getComputedStyle(el);
    return isVisible(el, style, el.getBoundingClientRect());
  }

  function reveal(el) {
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  }

  // Whether something else (a cookie banner, an overlay) sits on top of the element's centre.
  // The click is still delivered (element.click() ignores overlap) but the caller is told.
  function obscured(el) {
    const { x, y } = center(el);
    let hit = el.ownerDocument.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    if (!hit) return false;
    return !(hit === el || el.contains(hit) || hit.contains(el) && hit.tagName === 'LABEL');
  }

  function pointerSequence(el) {
    const view = el.ownerDocument.defaultView;
    const { x, y } = center(el);
    const base = { bubbles: true, cancelable: true, composed: true, view, clientX: x, clientY: y, button: 0 };
    const pointer = { ...base, pointerId: 1, pointerType: 'mouse', isPrimary: true };
    el.dispatchEvent(new view.PointerEvent('pointerover', pointer));
    el.dispatchEvent(new view.MouseEvent('mouseover', base));
    el.dispatchEvent(new view.PointerEvent('pointerdown', { ...pointer, buttons: 1 }));
    el.dispatchEvent(new view.MouseEvent('mousedown', { ...base, buttons: 1 }));
    if (typeof el.focus === 'function') el.focus({ preventScroll: true });
    el.dispatchEvent(new view.PointerEvent('pointerup', pointer));
    el.dispatchEvent(new view.MouseEvent('mouseup', base));
  }

  function usable(el) {
    if (isDisabled(el)) return fail('disabled', 'the element is disabled');
    reveal(el);
    if (!checkVisible(el)) return fail('not-visible', 'the element is not visible');
    return null;
  }

  function click(el) {
    const blocked = usable(el);
    if (blocked) return blocked;
    const covered = obscured(el);
    pointerSequence(el);
    // element.click() dispatches the click event and runs activation behaviour (follow a link,
    // toggle a checkbox, submit a form) the way a real click does.
    el.click();
    return { ok: true, obscured: covered };
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

  function type(el, action) {
    const blocked = usable(el);
    if (blocked) return blocked;
    const text = String(action.text ?? '');
    const clear = action.clear !== false;
    const isField = el.tagName === 'TEXTAREA' || (el.tagName === 'INPUT' && !['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'hidden'].includes(el.type));
    if (isField) {
      if (el.readOnly) return fail('disabled', 'the field is read-only');
      el.focus({ preventScroll: true });
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
      return { ok: true, accepted };
    }
    if (el.isContentEditable) {
      el.focus({ preventScroll: true });
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
      return { ok: true, accepted: true };
    }
    return fail('not-editable', `a ${el.tagName.toLowerCase()} cannot be typed into`);
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

  function selectOption(el, action) {
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
    el.focus({ preventScroll: true });
    setNativeValue(el, match.value);
    fire(el, 'input');
    fire(el, 'change');
    return { ok: true, value: match.value, text: collapse(match.text) };
  }

  function scrollPage(direction) {
    const before = window.scrollY;
    const dy = Math.round(window.innerHeight * 0.85) * (direction === 'up' ? -1 : 1);
    window.scrollBy({ top: dy, behavior: 'instant' });
    const scroller = document.scrollingElement || document.documentElement;
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
    const raw = isField ? el.value : el.innerText || el.textContent || '';
    return { ok: true, text: cap(collapse(raw), max) };
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

  // act(handle, {op, ...}); `handle` is null for page-level scrolling. Never throws: every
  // outcome is a JSON-serialisable {ok: true, ...} or {ok: false, error, message}.
  function act(handle, action) {
    try {
      const op = action && action.op;
      if (op === 'scroll' && (handle === null || handle === undefined)) return scrollPage(action.direction);
      const { el, err } = resolve(handle);
      if (err) return err;
      switch (op) {
        case 'click': return click(el);
        case 'type': return type(el, action);
        case 'select': return selectOption(el, action);
        case 'scroll': reveal(el); return { ok: true };
        case 'read': return read(el, action);
        case 'highlight': return highlight(el, action);
        default: return fail('bad-action', `unknown op ${JSON.stringify(op)}`);
      }
    } catch (e) {
      return fail('exception', String((e && e.message) || e));
    }
  }

  Object.defineProperty(globalThis, '__tandemDriver', {
    value: Object.freeze({ version: VERSION, docId, snapshot, act }),
    configurable: true,
    enumerable: false,
    writable: false,
  });
})();
