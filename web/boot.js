// Starts the wasm app. Trunk's default loader is an inline <script type="module">, which the
// page's Content-Security-Policy (script-src 'self') refuses; Trunk.toml's `pattern_script`
// puts this file in its place, with the hashed file names in data attributes.
//
// A release build (`./dev build`, web/snapshot.mjs) also pre-draws the playground's first screen
// as plain markup, exactly as the app draws it for a first visit: the starter cluster inside
// index.html, and each gallery scenario's in first/<id>.html. A first visit (nothing saved for
// that session, no share link) shows the copy at once, and it is interactive before the wasm
// arrives: presses, keys and typing are kept here and replayed into the app, in order, once it
// has drawn itself. Any other visit drops the copy, which would show the wrong world, and waits
// for the app. ARCHITECTURE.md, "First load".
const boot = document.querySelector('script[data-converge-boot]');
// The starter's localStorage key (crates/web/src/persist.rs STORAGE_KEY; a scenario session's is
// `<key>.scenario.<id>`, lesson.rs storage_key) and the form of every share link version
// (view::share::is_share_link); a test in persist.rs keeps them equal.
const STORAGE_KEY = 'converge.workspace';
const SHARE_LINK = /^#w[0-9]+\./;
const SCENARIO_LINK = /^\?scenario=([a-z0-9-]+)$/;

function saved(key) {
  try {
    return localStorage.getItem(key) !== null;
  } catch {
    return false; // no storage: the app starts fresh, as the copy shows
  }
}

const BUILD = boot.dataset.wasm.split('/').pop(); // what snapshot.mjs writes in data-snapshot
const COPY_TIMEOUT_MS = 3000;
let copy = null; // the pre-drawn screen on the page, while it stands in for the app

/** The copy of this visit's first screen, or null when this is not a first visit. */
async function firstScreen() {
  const inline = document.querySelector('[data-snapshot]');
  const linked = SHARE_LINK.test(location.hash);
  if (location.search === '' && !linked && inline?.children.length && !saved(STORAGE_KEY)) {
    return inline;
  }
  inline?.remove(); // the starter's screen would show the wrong world
  if (linked) return null;
  const id = SCENARIO_LINK.exec(location.search)?.[1];
  if (!id || saved(`${STORAGE_KEY}.scenario.${id}`)) return null;
  try {
    // A slow answer is not waited for: the app itself would be later still.
    const response = await fetch(new URL(`first/${id}.html`, document.baseURI),
      { signal: AbortSignal.timeout(COPY_TIMEOUT_MS) });
    if (!response.ok) return null; // `custom`, or a build without copies
    const template = document.createElement('template');
    template.innerHTML = (await response.text()).trim();
    const el = template.content.firstElementChild;
    // Drawn by this build (its value is the wasm's hashed name), not kept by a cache from another.
    return el?.matches('.shell[data-snapshot]') && el.dataset.snapshot === BUILD ? el : null;
  } catch {
    return null;
  }
}

/** The element path from `root` (child indexes among elements), or null outside it. */
function pathOf(root, el) {
  const path = [];
  for (let n = el; n && n !== root; n = n.parentElement) {
    if (!n.parentElement) return null;
    path.unshift(Array.prototype.indexOf.call(n.parentElement.children, n));
  }
  return path;
}

function follow(root, path) {
  let n = root;
  for (const i of path) {
    n = n?.children[i];
  }
  return n ?? null;
}

const SHORTCUTS = [' ', 'n', 'N', 'r', '?'];
// Where a key is the person's typing or a control's own key, never a shortcut: the same rule as
// crates/web/src/shortcuts.rs (TYPING, which a test there keeps equal, and is_typing_target).
const TYPING = "input, textarea, select, button, [contenteditable]:not([contenteditable='false']), [role='textbox'], [role='searchbox'], [role='combobox'], dialog[open]";

function typingTarget(el) {
  if (!(el instanceof Element) || el.closest('dialog:not([open])')) return false;
  return el.isContentEditable || el.closest(TYPING) !== null;
}
const EVENTS = ['click', 'input', 'change', 'keydown'];
// What a person can act on in the copy; a click elsewhere (text, a heading, a label, whose control
// gets its own event) is not an action.
const CONTROL = 'button, a[href], select, input, textarea, summary, [tabindex]';
const queue = [];
let status = null; // the "Starting the simulator" line, a live region made empty up front

/** What must match between the copy's element and the app's before an action is replayed. */
function signature(el) {
  const text = el.matches('button, a, summary') ? el.textContent.trim() : '';
  return `${el.tagName}#${el.id}[${el.getAttribute('aria-label') ?? ''}]:${text}`;
}

function say(text) {
  if (status) status.textContent = text;
}

function acknowledge(target) {
  target?.classList?.add('boot-pending');
  const n = queue.length;
  say(`Starting the simulator: ${n} ${n === 1 ? 'action waits' : 'actions wait'} for it.`);
}

function record(e) {
  const inCopy = copy.contains(e.target);
  // The app's shortcuts (crates/web/src/shortcuts.rs), where the app would act on them: nothing
  // focused, or a focused element of the copy that does not take keys (a link). Never while the
  // person types: the key is left to its field, not prevented.
  const free = inCopy
    ? !typingTarget(e.target)
    : e.target === document.body || e.target === document.documentElement;
  if (e.type === 'keydown' && free && SHORTCUTS.includes(e.key) && !(e.ctrlKey || e.metaKey || e.altKey)) {
    e.preventDefault();
    queue.push({ type: 'keydown', path: null, key: e.key, shiftKey: e.shiftKey });
    acknowledge(null);
    return;
  }
  if (!inCopy) return;
  const el = e.target.closest(CONTROL);
  if (!el) return;
  if (e.type === 'click' && el.matches('a[href]')) return; // a link works as it is (in-page or away)
  if (e.type === 'click' && el.matches('select, input, textarea')) return; // their change counts
  if (e.type === 'input' && el.matches('select, input[type=checkbox], input[type=radio]')) return;
  if (e.type === 'change' && el.matches('textarea, input:not([type=checkbox]):not([type=radio])')) return;
  if (e.type === 'keydown' && !(e.key === 'Enter' && (e.ctrlKey || e.metaKey))) return; // Apply only
  const entry = { type: e.type, path: pathOf(copy, el), sig: signature(el) };
  if (e.type === 'input' || e.type === 'change') {
    Object.assign(entry, { value: el.value, checked: el.checked });
    if (el.matches('textarea')) {
      Object.assign(entry, { start: el.selectionStart, end: el.selectionEnd, scroll: el.scrollTop });
    }
  }
  if (e.type === 'keydown') Object.assign(entry, { key: e.key, ctrlKey: e.ctrlKey, metaKey: e.metaKey });
  const last = queue[queue.length - 1];
  if (e.type === 'input' && last?.type === 'input' && String(last.path) === String(entry.path)) {
    queue[queue.length - 1] = entry; // typing: the text as it stands is what the app needs
    return;
  }
  queue.push(entry);
  acknowledge(el);
}

function stopListening() {
  for (const type of EVENTS) document.removeEventListener(type, record, true);
}

/** The copy can no longer become the app: leave it to read, not to press. */
function giveUp() {
  stopListening();
  queue.length = 0;
  if (copy) {
    copy.setAttribute('inert', '');
    for (const el of copy.querySelectorAll('.boot-pending')) el.classList.remove('boot-pending');
  }
  status?.remove();
  status = null;
  document.body.classList.remove('boot-waiting');
}

/** Where each kept action goes in the app's first screen, `root` (equal to the copy). */
function targetsIn(root) {
  return queue.map((entry) => {
    if (!entry.path) return document;
    const el = follow(root, entry.path);
    return el && signature(el) === entry.sig ? el : null;
  });
}

/**
 * Replays the kept actions into their `targets`, found before anything ran, so each reaches the
 * element the person touched even after earlier ones changed the screen. One task apart: yew
 * runs each message (and what a child component passes to its parent, as the editor's Apply)
 * before the next action, so they reach the model in the order the person took them.
 */
async function replay(targets) {
  let dropped = 0;
  try {
    for (const [i, entry] of queue.entries()) {
      await new Promise((ok) => setTimeout(ok, 0)); // the app ends its render (or last action)
      if (document.getElementById('panic-panel')) return; // the app is gone; the panel says why
      const el = targets[i];
      if (!el || !el.isConnected) {
        dropped += 1;
        continue;
      }
      if (entry.type === 'click') {
        el.click();
      } else if (entry.type === 'input' || entry.type === 'change') {
        if (el.type === 'checkbox' || el.type === 'radio') el.checked = entry.checked;
        else el.value = entry.value;
        el.dispatchEvent(new Event(entry.type, { bubbles: true }));
        if (entry.start !== undefined) {
          el.setSelectionRange(entry.start, entry.end);
          el.scrollTop = entry.scroll;
        }
      } else if (entry.type === 'keydown') {
        const { key, shiftKey = false, ctrlKey = false, metaKey = false } = entry;
        el.dispatchEvent(new KeyboardEvent('keydown', { key, shiftKey, ctrlKey, metaKey, bubbles: true, cancelable: true }));
      }
    }
  } finally {
    queue.length = 0;
    document.body.classList.remove('boot-waiting');
    if (dropped === 0) {
      status?.remove();
    } else {
      say(`${dropped} of the actions taken while the simulator started no longer had their control, and were not replayed.`);
      setTimeout(() => status?.remove(), 8000);
    }
  }
}

/** Shows `el` in place of the app until it is ready, keeping what the person does meanwhile. */
function standIn(el) {
  copy = el;
  if (!copy.isConnected) document.querySelector('noscript')?.after(copy);
  if (!copy.isConnected) document.body.prepend(copy);
  // Shipped inert and hidden (`boot-unclaimed`), so nothing is pressed before this script
  // listens, and a visit that is not a first one never shows it.
  copy.removeAttribute('inert');
  copy.classList.remove('boot-unclaimed');
  status = document.createElement('p');
  status.className = 'boot-status';
  status.setAttribute('role', 'status');
  document.body.append(status);
  document.body.classList.add('boot-waiting');
  for (const type of EVENTS) document.addEventListener(type, record, true);
  addEventListener('converge-ready', (e) => {
    stopListening();
    const root = e.detail?.root;
    if (!root) {
      giveUp();
      copy.remove(); // the app is on the page; the copy must not stand beside it
      return;
    }
    // The app has drawn the same screen next to the copy; swap them in this task (no frame shows
    // both), keeping the focus where the person left it.
    const focusedPath = pathOf(copy, document.activeElement);
    const focusedSig = focusedPath?.length ? signature(document.activeElement) : null;
    copy.remove();
    if (focusedSig) {
      const target = follow(root, focusedPath);
      if (target && signature(target) === focusedSig) target.focus();
    }
    replay(targetsIn(root));
  }, { once: true });
  // A panic after the module started (in the first render): the panel explains it
  // (crates/web/src/panic_panel.rs); the copy stays to read, inert.
  addEventListener('converge-panic', giveUp, { once: true });
  performance.mark('converge-interactive');
}

// The starter's copy is in the page; a scenario's is fetched first (a few KB, one request), so
// on either kind of first visit the module's download starts once the copy is interactive.
const first = await firstScreen();
if (first) {
  standIn(first);
} else {
  const loading = document.createElement('p');
  loading.className = 'boot-loading';
  loading.setAttribute('role', 'status');
  loading.textContent = 'Starting the simulator…';
  document.body.append(loading);
  addEventListener('converge-ready', () => loading.remove(), { once: true });
  addEventListener('converge-panic', () => loading.remove(), { once: true });
}

try {
  const bindings = await import(boot.dataset.js);
  const wasm = await bindings.default({ module_or_path: boot.dataset.wasm });
  dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm } }));
} catch (e) {
  giveUp();
  document.querySelector('.boot-loading')?.remove();
  // A panic while starting: the app's panic panel (crates/web/src/panic_panel.rs) explains it.
  if (document.getElementById('panic-panel')) throw e;
  // Offline before the module was cached, a cut download, no WebAssembly: say so, keep the page.
  const failed = document.createElement('p');
  failed.className = 'boot-status boot-failed';
  failed.setAttribute('role', 'alert');
  failed.textContent = `The simulator could not start (${e?.message ?? e}). Reload the page to try again.`;
  document.body.append(failed);
  document.body.classList.add('boot-waiting'); // keeps the page's end clear of the line
  throw e;
}
