#!/bin/bash
# Every output issue 20's fidelity rule compares, written by one `converge` binary into a
# directory, one file per command (stdout) and one beside it (stderr, then the exit code), so
# two binaries' directories can be compared with `diff -r`:
#
#   crates/core/benches/compare-outputs.sh target/before/converge target/out-before
#   crates/core/benches/compare-outputs.sh target/release/converge target/out-after
#   diff -r target/out-before target/out-after && echo identical
#
# `run` (text and --json, the scenario's seed and --seed 7) and `check` of every scenario in
# tests/scenarios, tests/fixtures/scenarios and the 1 -> 1,000 bench scenario; `status` and
# `rollout-status` of those and of every fixture in tests/fixtures/kstatus and
# tests/fixtures/rollout. About 25 s on 2 cores.
set -u
bin=$(realpath "$1")
out=$(realpath -m "$2")
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)" || exit 1
rm -rf "$out"
mkdir -p "$out"
scenarios=(tests/scenarios/*.yaml tests/fixtures/scenarios/*.yaml
  crates/core/benches/scenarios/scale-1-to-1000.yaml)
fixtures=(tests/fixtures/kstatus/*.yaml tests/fixtures/kstatus/*.json tests/fixtures/rollout/*.yaml)
one() {
  local name=$1
  shift
  "$bin" "$@" >"$out/$name" 2>"$out/$name.err"
  echo "exit $?" >>"$out/$name.err"
}
for f in "${scenarios[@]}"; do
  b=$(echo "$f" | tr / _)
  one "$b.run" run "$f"
  one "$b.run.json" run --json "$f"
  one "$b.run.seed7" run --seed 7 "$f"
  one "$b.run.json.seed7" run --json --seed 7 "$f"
  one "$b.check" check "$f"
done
for f in "${scenarios[@]}" "${fixtures[@]}"; do
  b=$(echo "$f" | tr / _)
  one "$b.status" status "$f"
  one "$b.rollout" rollout-status "$f"
done
echo "$(ls "$out" | wc -l) files in $out"
