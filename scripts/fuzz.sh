#!/usr/bin/env bash
# make fuzz: every target in fuzz/ under AFL++, coverage-guided, on the stable toolchain.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]
# cargo-afl instruments with stable rustc's SanitizerCoverage passes, so no nightly is needed
# (cargo-fuzz and bolero's libFuzzer engine want nightly's -Z flags). AFL++ itself is built from
# the source cargo-afl ships, once. Findings stay in target/fuzz/<target>/default/{crashes,hangs};
# the summary table goes to target/fuzz/latest.md.
set -euo pipefail

seconds=${1:-60}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
log() { printf 'fuzz: %s\n' "$*" >&2; }

if ! cargo afl --version >/dev/null 2>&1; then
  log "installing cargo-afl (first run only)"
  cargo install --locked cargo-afl --version 0.18.2
fi
# Builds AFL++ and its runtime for this rustc once; later runs report "already built".
cargo afl config --build >/dev/null 2>&1 || { cargo afl config --build 2>&1 || true; } | grep "already built" >/dev/null

# A target dir of its own: the instrumented build must not invalidate the normal one.
export CARGO_TARGET_DIR="$root/target/afl"
cargo afl build --quiet -p backpressure-fuzz --features afl --bin fuzz-target

# Running as root in a container: no CPU governor to check, core dumps not piped to a handler.
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_NO_AFFINITY=1

out="$root/target/fuzz"
mkdir -p "$out"
table="| Target | Seconds | Executions | Exec/s | Corpus (seeds → kept) | Crashes | Hangs |
| --- | --- | --- | --- | --- | --- | --- |"
failed=0
for target in $(ls fuzz/corpus); do
  log "$target for $seconds s"
  rm -rf "$out/$target"
  FUZZ_TARGET=$target cargo afl fuzz -i "fuzz/corpus/$target" -o "$out/$target" -V "$seconds" \
    -- "$CARGO_TARGET_DIR/debug/fuzz-target" >"$out/$target.log" 2>&1 || {
      log "AFL++ failed on $target; its log:"; tail -n 30 "$out/$target.log" >&2; exit 1; }
  stats="$out/$target/default/fuzzer_stats"
  stat() { awk -F' *: *' -v k="$1" '$1 == k { print $2 }' "$stats"; }
  seeds=$(ls "fuzz/corpus/$target" | wc -l)
  crashes=$(stat saved_crashes)
  hangs=$(stat saved_hangs)
  table+=$'\n'"| $target | $seconds | $(stat execs_done) | $(stat execs_per_sec) | $seeds → $(stat corpus_count) | $crashes | $hangs |"
  if [ "$crashes" != 0 ]; then failed=1; log "$target: crashes in $out/$target/default/crashes"; fi
done
printf '%s\n' "$table" | tee "$out/latest.md"
exit "$failed"
