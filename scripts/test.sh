#!/usr/bin/env bash
# scripts/test.sh: the whole test suite, as README.md and .ci/run call it.
#   1. the normal build (debugoptimized) and every meson test;
#   2. a second build with ASan+UBSan running the same tests;
#   3. each libFuzzer target for a bounded time on its saved corpus.
# Prints "N passed, N failed" at the end.  PTXWAVE_FUZZ_SECONDS sets the
# time per fuzz target (default 30; 0 skips fuzzing).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
./scripts/install-deps.sh || exit 1

jobs=$(nproc)
passed=0
failed=0
# Each heading carries the seconds since the start, so a CI log shows where
# the time goes (the target is under 25 minutes on 2 cores).
note() { printf '\n== [%4ds] %s\n' "$SECONDS" "$*"; }

setup() { # dir, meson options...
  local dir=$1; shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; return 1; }
  fi
  ninja -C "$dir" -j "$jobs" >"$dir.ninja.log" 2>&1 || { tail -60 "$dir.ninja.log"; return 1; }
}

count_meson() { # dir: add the results of the last `meson test` to the totals
  local log=$1/meson-logs/testlog.json ok bad
  ok=$(grep -c '"result": "OK"' "$log" 2>/dev/null || true)
  bad=$(grep -Ec '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" 2>/dev/null || true)
  passed=$((passed + ${ok:-0}))
  failed=$((failed + ${bad:-0}))
}

run_suite() { # dir, label, env...
  local dir=$1 label=$2; shift 2
  note "$label: build"
  if ! setup "$dir" "${SETUP_ARGS[@]}"; then failed=$((failed + 1)); return; fi
  note "$label: meson test"
  env "$@" meson test -C "$dir" --print-errorlogs --num-processes "$jobs" \
    --timeout-multiplier "${TIMEOUT_MULT:-1}"
  count_meson "$dir"
}

# Bash cannot pass an array as a one-command prefix assignment, so the
# meson options of each build are set as plain globals before its run.
SETUP_ARGS=()
TIMEOUT_MULT=1
run_suite build "release-ish build"
# The nvcc-built tests/cuda programs are uninstrumented and the same in
# both builds: the ASan build runs the normal build's (built by its run_*
# tests above) instead of building the 60 executables again.
# shellcheck disable=SC2054  # the comma is meson's list syntax
SETUP_ARGS=(-Db_sanitize=address,undefined -Db_lundef=false -Dlower_verify_each=true
            "-Dprebuilt_programs_dir=$PWD/build/tests/cuda")
TIMEOUT_MULT=4
run_suite build-asan "ASan+UBSan build" \
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

fuzz_secs=${PTXWAVE_FUZZ_SECONDS:-30}
if [ "$fuzz_secs" != 0 ] && [ -d fuzz ]; then
  note "libFuzzer targets, ${fuzz_secs}s each"
  if CC=clang-22 setup build-fuzz -Dfuzz=true -Dtests=disabled; then
    for t in build-fuzz/fuzz/fuzz_*; do
      if [ ! -f "$t" ] || [ ! -x "$t" ]; then continue; fi   # not the fuzz_*.p object dirs
      name=$(basename "$t")
      corpus=fuzz/corpus/${name#fuzz_}
      work=$(mktemp -d)
      # New inputs go to a scratch dir; the saved corpus is read only.
      if "$t" -max_total_time="$fuzz_secs" -rss_limit_mb=2048 -timeout=10 \
           -artifact_prefix="build-fuzz/$name-" "$work" "$corpus" >"build-fuzz/$name.log" 2>&1; then
        # libFuzzer's last line: "Done N runs in S second(s)" (the
        # recommended-dictionary lines above it can contain "#<digits>").
        echo "$name: ok ($(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "build-fuzz/$name.log") runs)"
        passed=$((passed + 1))
      else
        echo "$name: FAILED"; tail -40 "build-fuzz/$name.log"
        # The input that failed, so a CI log alone reproduces it:
        # base64 -d > crash; build-fuzz/fuzz/$name crash
        for a in build-fuzz/"$name"-crash-* build-fuzz/"$name"-timeout-* build-fuzz/"$name"-oom-* build-fuzz/"$name"-leak-*; do
          [ -f "$a" ] || continue
          if [ "$(wc -c <"$a")" -le 16384 ]; then
            echo "--- $a (base64):"; base64 "$a"
          else
            echo "--- $a: $(wc -c <"$a") bytes, too long to print"
          fi
        done
        failed=$((failed + 1))
      fi
      rm -rf "$work"
    done
  else
    failed=$((failed + 1))
  fi
fi

echo
echo "tests: $passed passed, $failed failed (${SECONDS}s)"
[ "$failed" -eq 0 ]
