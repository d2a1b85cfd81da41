#!/bin/bash
# C-level tests of the engines, without PHP:
#   - shm_unit: unit, model, fork, crash and corruption tests of the shm
#     engine through the vtable; file_unit: the File store's log and record
#     checks, rebuilds from damaged logs, index damage; redis_unit, mc_unit:
#     the Redis and memcached entry records and codecs. All built with
#     AddressSanitizer + UndefinedBehaviorSanitizer;
#   - libFuzzer harnesses, each for a bounded time: fuzz_shm, fuzz_hdr
#     (segment image + operations; the header check alone), fuzz_file_log
#     (log files -> rebuild -> every id checked), fuzz_file_idx (a damaged
#     index file + operations), fuzz_redis_rec, fuzz_mc_rec (records and
#     decompression as read back from a server), fuzz_redis_reply (any
#     bytes as a server's reply, in pieces, through tcr_conn_cmd).
# Redis and memcached programs need hiredis / libmemcached (pkg-config):
# without them they are skipped, with the reason.
# Ends with one line "c: N passed, N failed, N skipped"; exits non-zero when
# something failed.
#   tests/c/run.sh                 unit tests, then each fuzzer for 20 s
#   tests/c/run.sh --fuzz N        each fuzzer for N seconds (0: none)
#   tests/c/run.sh --unit          the unit tests only
#   tests/c/run.sh --build         build only
# Environment: CC (default clang), UNIT_ARGS (shm_unit's, e.g. "--seed 7 -v").
# A fuzzer's crash leaves its input in tests/c/build/artifacts/; replay it
# with tests/c/build/<fuzzer> <file>. Each fuzzer starts from the seeds in
# tests/c/seeds/<fuzzer>/ (small inputs the engine itself produced, and
# every input that once found a fault) and from those its
# TC_FUZZ_WRITE_SEEDS mode writes; the corpus grows in build/corpus/.
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

passed=0; failed=0; skipped=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
ko() { failed=$((failed + 1)); echo "FAIL $1"; }
sk() { skipped=$((skipped + 1)); echo "skip $1"; }
finish() {
	echo "c: $passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit
}

t0=$SECONDS
make -s -k -j"$(nproc)" all
UNITS=(); FUZZERS=()
for t in $(make -s print-programs); do
	# up to date means this build succeeded (a failed one leaves it stale)
	if make -s -q "$B/$t" 2>/dev/null; then
		case "$t" in
			fuzz_*) ok "build $t (libFuzzer, ASan+UBSan)"; FUZZERS+=("$t") ;;
			*) ok "build $t (${CC:-clang}, ASan+UBSan)"; UNITS+=("$t") ;;
		esac
	else
		ko "build $t"
	fi
done
while IFS= read -r line; do
	[ -n "$line" ] && sk "$line"
done < <(make -s print-skipped)
echo "built in $((SECONDS - t0)) s"
[ "$BUILD_ONLY" = 1 ] && finish

# where the unit tests and fuzzers put their directories
WORK_DIR=$(mktemp -d /dev/shm/tc-ctest.XXXXXX 2>/dev/null || mktemp -d /tmp/tc-ctest.XXXXXX)
trap 'rm -rf "$WORK_DIR"' EXIT
for u in "${UNITS[@]}"; do
	t0=$SECONDS
	out=$(mktemp)
	args=()
	# shellcheck disable=SC2206
	[ "$u" = shm_unit ] && args=(${UNIT_ARGS:-})
	TC_FUZZ_DIR="$WORK_DIR" "$B/$u" "${args[@]}" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$out" | tail -1)
	# a run that died (a sanitizer abort) left its segments behind
	dir=$(sed -n 's/^shm_unit: seed [0-9]*, segments in //p' "$out" | head -1)
	case "$dir" in /dev/shm/tc-cunit.*|/tmp/tc-cunit.*) rm -rf "$dir" ;; esac
	rm -f "$out"
	if [ -z "$line" ]; then
		ko "$u ended without a summary (exit status $rc)"
	else
		passed=$((passed + ${line%% passed*}))
		n=${line#*, }; nf=${n%% failed*}; failed=$((failed + nf))
		case "$line" in *skipped) n=${line##*failed, }; skipped=$((skipped + ${n%% skipped*})) ;; esac
		[ "$rc" -eq 0 ] || [ "$nf" -gt 0 ] || ko "$u exit status $rc"
	fi
	echo "$u: $((SECONDS - t0)) s"
done

if [ "$FUZZ_SECS" -gt 0 ] && [ "${#FUZZERS[@]}" -gt 0 ]; then
	# the fuzzers run side by side
	FUZZ_DIR=$WORK_DIR
	mkdir -p "$B/artifacts"
	t0=$SECONDS
	pids=()
	for f in "${FUZZERS[@]}"; do
		corpus="$B/corpus/$f"
		mkdir -p "$corpus"
		TC_FUZZ_DIR="$FUZZ_DIR" TC_FUZZ_WRITE_SEEDS="$corpus" timeout 60 "$B/$f" >/dev/null 2>&1
		seeds=()
		[ -d "seeds/$f" ] && seeds=("seeds/$f")
		TC_FUZZ_DIR="$FUZZ_DIR" timeout $((FUZZ_SECS + 120)) "$B/$f" -max_total_time="$FUZZ_SECS" \
			-timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
			-artifact_prefix="$B/artifacts/$f-" "$corpus" "${seeds[@]}" >"$B/$f.log" 2>&1 &
		pids+=($!)
	done
	for i in "${!FUZZERS[@]}"; do
		f=${FUZZERS[$i]}
		wait "${pids[$i]}"
		rc=$?
		log="$B/$f.log"
		runs=$(grep -E '^stat::number_of_executed_units' "$log" | sed -E 's/.*: *//')
		cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
		if [ "$rc" -eq 0 ]; then
			ok "$f: ${FUZZ_SECS} s, ${runs:-?} inputs, ${cov:-cov: ?} edges, corpus of $(find "$B/corpus/$f" -type f | wc -l)"
		else
			grep -E 'ERROR|SUMMARY|fuzz_|Test unit written|#[0-4] ' "$log" | head -30
			ko "$f: exit status $rc (log: tests/c/$log)"
		fi
	done
	echo "fuzzers: $((SECONDS - t0)) s"
fi
finish
