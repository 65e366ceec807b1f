// The embed poster (no framework, no wasm): shows what will load, reports its height to the host
// page, and starts the playground on a click or on {"converge": 1, "type": "start"} from the
// host. Every other message gets an error reply: the playground is not running yet.
(() => {
  'use strict';
  const params = new URLSearchParams(location.search);
  const id = params.get('id') || params.get('scenario') || 'starter';
  const origin = params.get('origin');
  const theme = params.get('theme');
  if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
  const scenario = params.get('scenario');
  const title = params.get('title') || (scenario ? scenario.replace(/-/g, ' ') : null);
  if (title) document.getElementById('poster-title').textContent = title;

  const parentWindow = window.parent !== window ? window.parent : null;
  const post = (target, message, targetOrigin) => target?.postMessage({ converge: 1, embed: id, ...message }, targetOrigin);
  const poster = document.getElementById('poster');
  // The poster's own height (not the viewport's), so resizing the iframe does not feed back.
  const reportHeight = () => post(parentWindow, { type: 'height', height: Math.ceil(poster.getBoundingClientRect().height) }, origin || '*');

  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    params.delete('embed');
    const rest = params.toString();
    // The playground itself, in embed mode, with the same parameters.
    location.replace(`./?embed${rest ? `&${rest}` : ''}`);
  };
  document.getElementById('poster').addEventListener('click', start);

  window.addEventListener('message', (event) => {
    if (!parentWindow || event.source !== parentWindow) return;
    const reply = (message) => post(event.source, message, event.origin);
    if (origin && event.origin !== origin.replace(/\/$/, '')) {
      reply({ type: 'error', requestId: null, error: `origin ${event.origin} may not drive this embed` });
      return;
    }
    const data = event.data;
    const requestId = data && typeof data === 'object' ? data.requestId ?? null : null;
    if (!data || typeof data !== 'object' || Array.isArray(data)) {
      reply({ type: 'error', requestId, error: 'a message must be a JSON object' });
    } else if (data.converge !== 1) {
      reply({ type: 'error', requestId, error: 'missing "converge": 1' });
    } else if (data.type === 'start') {
      reply({ type: 'starting', requestId });
      start();
    } else {
      reply({ type: 'error', requestId, error: 'not started: the reader has not clicked the poster; send {"converge": 1, "type": "start"} first' });
    }
  });
  reportHeight();
  window.addEventListener('resize', reportHeight);
})();
