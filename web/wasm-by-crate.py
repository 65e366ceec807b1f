# Sums `twiggy top -f csv` of the names-kept, -Oz optimised release wasm by crate (BENCHMARKS.md,
# session 8): python3 web/wasm-by-crate.py top.csv
import csv, re, sys, collections
G = {'converge_core': 'converge-core', 'imbl': 'imbl, archery, imbl-sized-chunks', 'archery': 'imbl, archery, imbl-sized-chunks',
     'imbl_sized_chunks': 'imbl, archery, imbl-sized-chunks', 'yew': 'yew', 'converge_web': 'converge-web',
     'serde_path_to_error': 'serde, serde_json, serde_path_to_error', 'serde_json': 'serde, serde_json, serde_path_to_error',
     'serde': 'serde, serde_json, serde_path_to_error', 'serde_core': 'serde, serde_json, serde_path_to_error',
     'unsafe_libyaml': 'serde_yaml_ng, unsafe-libyaml', 'serde_yaml_ng': 'serde_yaml_ng, unsafe-libyaml', 'regex_lite': 'regex-lite',
     'json_patch': 'json-patch, jsonptr', 'jsonptr': 'json-patch, jsonptr', 'miniz_oxide': 'miniz_oxide, base64', 'base64': 'miniz_oxide, base64',
     'wasm_bindgen': 'wasm-bindgen, js-sys, web-sys', 'js_sys': 'wasm-bindgen, js-sys, web-sys', 'web_sys': 'wasm-bindgen, js-sys, web-sys',
     'indexmap': 'indexmap, hashbrown, rand_chacha', 'hashbrown': 'indexmap, hashbrown, rand_chacha', 'rand_core': 'indexmap, hashbrown, rand_chacha',
     'rand_chacha': 'indexmap, hashbrown, rand_chacha'}
tot = collections.Counter()
for r in csv.DictReader(open(sys.argv[1])):
    n, s = r['Name'], int(r['ShallowSize'])
    if n.startswith('"') or 'subsection' in n:
        continue  # the names section kept for this analysis; the release wasm has none
    if n.startswith('data segment'):
        tot['data (messages, field names, the gallery scenarios)'] += s
        continue
    if re.search(r'slice::sort|::sort::', n):
        tot['stable sorts (std, one per element type)'] += s
        continue
    crate = next((G[t] for t in re.findall(r'([A-Za-z_][A-Za-z0-9_]*)(?:\[[0-9a-f]+\])?::', n) if t in G), None)
    tot[crate or 'Rust core/alloc (BTreeMap, fmt, floats, strings, allocator)'] += s
total = sum(tot.values())
for k, v in tot.most_common():
    print(f'| {k} | {v / 1024:.1f} KiB | {100 * v / total:.0f}% |')
print(f'| total code and data | {total / 1024:.1f} KiB | |')
