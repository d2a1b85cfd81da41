#!/bin/bash
# C-level tests of the shared-memory engine, without PHP:
#   - shm_unit: unit, model, fork, crash and corruption tests through the
#     vtable, built with AddressSanitizer + UndefinedBehaviorSanitizer;
#   - fuzz_shm, fuzz_hdr: libFuzzer harnesses (segment image + operations;
#     the header check alone), each for a bounded time.
# Ends with one line "c: N passed, N failed, 0 skipped"; exits non-zero when
# something failed.
#   tests/c/run.sh                 unit test, then each fuzzer for 20 s
#   tests/c/run.sh --fuzz N        each fuzzer for N seconds (0: none)
#   tests/c/run.sh --unit          the unit test only
#   tests/c/run.sh --build         build only
# Environment: CC (default clang), UNIT_ARGS (e.g. "--seed 7 -v").
# A fuzzer's crash leaves its input in tests/c/build/artifacts/; replay it
# with tests/c/build/fuzz_shm <file>. The corpus grows in build/corpus/.
set -uo pipefail
cd "$(dirname "$0")"
FUZZ_SECS=20
BUILD_ONLY=0
while [ $# -gt 0 ]; do
	case "$1" in
		--fuzz) FUZZ_SECS=${2:?--fuzz needs a number of seconds}; shift ;;
		--unit) FUZZ_SECS=0 ;;
		--build) BUILD_ONLY=1 ;;
		*) echo "usage: $0 [--fuzz SECONDS | --unit | --build]" >&2; exit 2 ;;
	esac
	shift
done
B=build
# stacks with file:line (llvm-14 ships the symbolizer outside PATH)
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
	export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

passed=0; failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
ko() { failed=$((failed + 1)); echo "FAIL $1"; }
finish() {
	echo "c: $passed passed, $failed failed, 0 skipped"
	[ "$failed" -eq 0 ]
	exit
}

t0=$SECONDS
make -s -k -j"$(nproc)" all
UNIT=0; FUZZERS=()
for t in shm_unit fuzz_shm fuzz_hdr; do
	# up to date means this build succeeded (a failed one leaves it stale)
	if make -s -q "$B/$t" 2>/dev/null; then
		case "$t" in
			fuzz_*) ok "build $t (libFuzzer, ASan+UBSan)"; FUZZERS+=("$t") ;;
			*) ok "build $t (${CC:-clang}, ASan+UBSan)"; UNIT=1 ;;
		esac
	else
		ko "build $t"
	fi
done
echo "built in $((SECONDS - t0)) s"
[ "$BUILD_ONLY" = 1 ] && finish

if [ "$UNIT" = 1 ]; then
	t0=$SECONDS
	out=$(mktemp)
	# shellcheck disable=SC2086
	"$B/shm_unit" ${UNIT_ARGS:-} 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
	# a run that died (a sanitizer abort) left its segments behind
	dir=$(sed -n 's/^shm_unit: seed [0-9]*, segments in //p' "$out" | head -1)
	case "$dir" in /dev/shm/tc-cunit.*|/tmp/tc-cunit.*) rm -rf "$dir" ;; esac
	rm -f "$out"
	if [ -z "$line" ]; then
		ko "shm_unit ended without a summary (exit status $rc)"
	else
		passed=$((passed + ${line%% passed*}))
		n=${line#*, }; failed=$((failed + ${n%% failed*}))
		[ "$rc" -eq 0 ] || [ "${n%% failed*}" -gt 0 ] || ko "shm_unit exit status $rc"
	fi
	echo "shm_unit: $((SECONDS - t0)) s"
fi

if [ "$FUZZ_SECS" -gt 0 ] && [ "${#FUZZERS[@]}" -gt 0 ]; then
	# the fuzzers run side by side, one core each
	FUZZ_DIR=$(mktemp -d /dev/shm/tc-fuzz.XXXXXX)
	trap 'rm -rf "$FUZZ_DIR"' EXIT
	mkdir -p "$B/artifacts"
	t0=$SECONDS
	pids=()
	for f in "${FUZZERS[@]}"; do
		corpus="$B/corpus/$f"
		mkdir -p "$corpus"
		TC_FUZZ_DIR="$FUZZ_DIR" TC_FUZZ_WRITE_SEEDS="$corpus" timeout 60 "$B/$f" >/dev/null 2>&1
		TC_FUZZ_DIR="$FUZZ_DIR" timeout $((FUZZ_SECS + 120)) "$B/$f" -max_total_time="$FUZZ_SECS" \
			-timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
			-artifact_prefix="$B/artifacts/$f-" "$corpus" >"$B/$f.log" 2>&1 &
		pids+=($!)
	done
	for i in "${!FUZZERS[@]}"; do
		f=${FUZZERS[$i]}
		wait "${pids[$i]}"
		rc=$?
		log="$B/$f.log"
		runs=$(grep -E '^stat::number_of_executed_units' "$log" | sed -E 's/.*: *//')
		if [ "$rc" -eq 0 ]; then
			ok "$f: ${FUZZ_SECS} s, ${runs:-?} inputs, corpus of $(find "$B/corpus/$f" -type f | wc -l)"
		else
			grep -E 'ERROR|SUMMARY|fuzz_|Test unit written|#[0-4] ' "$log" | head -30
			ko "$f: exit status $rc (log: tests/c/$log)"
		fi
	done
	echo "fuzzers: $((SECONDS - t0)) s"
fi
finish
