// Starts the wasm app. Trunk's default loader is an inline <script type="module">, which the
// page's Content-Security-Policy (script-src 'self') refuses; Trunk.toml's `pattern_script`
// puts this file in its place, with the hashed file names in data attributes.
const boot = document.querySelector('script[data-converge-boot]');
const bindings = await import(boot.dataset.js);
const wasm = await bindings.default({ module_or_path: boot.dataset.wasm });
dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm } }));
