// The host side of the embed demo: sizes each iframe from its height messages and drives the
// second embed with the message API. A documentation site would copy this pattern.
(() => {
  'use strict';
  const frames = [...document.querySelectorAll('iframe.converge-embed')];
  const log = document.getElementById('log');
  const lines = [];
  let next = 1;

  window.addEventListener('message', (event) => {
    if (event.origin !== location.origin) return; // the embeds are served from this origin
    const frame = frames.find((f) => f.contentWindow === event.source);
    const data = event.data;
    if (!frame || !data || data.converge !== 1) return;
    if (data.type === 'height') {
      frame.style.height = `${Math.ceil(data.height) + 2}px`;
      return;
    }
    lines.push(`${frame.id}: ${JSON.stringify(data)}`);
    log.textContent = lines.slice(-30).join('\n');
    frame.dataset.last = JSON.stringify(data);
  });

  const target = document.getElementById('embed-b');
  for (const button of document.querySelectorAll('[data-send]')) {
    button.addEventListener('click', () => {
      const type = button.dataset.send;
      const message = type === 'bogus' ? { converge: 1, type: 'explode', requestId: next++ } : { converge: 1, type, requestId: next++ };
      target.contentWindow.postMessage(message, location.origin);
    });
  }
})();
