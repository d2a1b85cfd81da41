#!/bin/bash
# Run the phpt suite against modules/tagcache.so and print one line
# "N passed, N failed, N skipped" (run-tests.php prints no such line).
#   scripts/test.sh [--valgrind|--asan] [-jN] [tests or dirs...]
# -jN runs N tests at a time (run-tests.php's workers); tests that must not
# run side by side say so in --CONFLICTS-- or a CONFLICTS file.
# Exits non-zero when a test fails or when no test ran.
set -uo pipefail
cd "$(dirname "$0")/.."
# 0 when scripts/valgrind-skip.txt has a pattern (a path under tests/, *
# allowed) that matches the test $1
valgrind_skipped() {
	local pat rest
	while read -r pat rest; do
		case "$pat" in ''|'#'*) continue ;; esac
		# shellcheck disable=SC2254
		case "$1" in $pat) return 0 ;; esac
	done < "$SKIPLIST"
	return 1
}
MODE=plain
JOBS=()
while [ $# -gt 0 ]; do
	case "$1" in
		--valgrind) MODE=valgrind; shift ;;
		--asan) MODE=asan; shift ;;
		# --shuffle: run-tests hands a worker 32 tests at a time unless the
		# order is shuffled (then 4), which leaves one worker alone with the
		# last batch; shuffled, the workers stay busy until the end.
		-j[0-9]*) [ "$1" = -j1 ] || JOBS=("$1" --shuffle); shift ;;
		*) break ;;
	esac
done
[ "$#" -gt 0 ] || set -- tests
# Under valgrind, a directory given stands for its tests but those that
# scripts/valgrind-skip.txt names (each with the valgrind test that covers
# its C paths); a test named by its own path always runs.
if [ "$MODE" = valgrind ]; then
	SKIPLIST="$PWD/scripts/valgrind-skip.txt"
	ARGV=()
	NSKIP=0
	for a in "$@"; do
		if [ -d "$a" ]; then
			while IFS= read -r t; do
				t=${t#./}; t=${t#"$PWD"/}
				if valgrind_skipped "$t"; then
					NSKIP=$((NSKIP + 1))
				else
					ARGV+=("$t")
				fi
			done < <(find "${a%/}" -name '*.phpt' | sort)
		else
			ARGV+=("$a")
		fi
	done
	[ "$NSKIP" -gt 0 ] && echo "valgrind: $NSKIP tests not run under memcheck: scripts/valgrind-skip.txt names them, with the tests that cover their C paths"
	# a line of the list that names no test is a mistake (a renamed test)
	STALE=$(while read -r pat rest; do
		case "$pat" in ''|'#'*) continue ;; esac
		# shellcheck disable=SC2086
		compgen -G "$pat" >/dev/null || echo "$pat"
	done < "$SKIPLIST")
	set -- ${ARGV[@]+"${ARGV[@]}"}
fi
PHP_BIN=${PHP_BIN:-$(command -v php)}
RUNTESTS="$(php-config --extension-dir)/build/run-tests.php"
[ -f "$RUNTESTS" ] || RUNTESTS=/usr/lib/php/build/run-tests.php
export TAGCACHE_MODULE="$PWD/modules/tagcache.so"
[ -f "$TAGCACHE_MODULE" ] || { echo "no $TAGCACHE_MODULE: run scripts/build.sh" >&2; exit 2; }
export NO_INTERACTION=1 TEST_PHP_EXECUTABLE="$PHP_BIN" REPORT_EXIT_STATUS=1
ARGS=(-q -p "$PHP_BIN" -d "extension=$TAGCACHE_MODULE" --show-diff)
if [ "$MODE" = valgrind ]; then
	export USE_ZEND_ALLOC=0 ZEND_DONT_UNLOAD_MODULES=1 TEST_TIMEOUT=900
	export TAGCACHE_REAL_PHP="$PHP_BIN"
	TEST_PHP_EXECUTABLE="$PWD/scripts/valgrind-php.sh"
	ARGS=(-q -p "$TEST_PHP_EXECUTABLE" -d "extension=$TAGCACHE_MODULE" --show-diff)
elif [ "$MODE" = asan ]; then
	export LD_PRELOAD="$(gcc -print-file-name=libasan.so)"
	export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1"
	export USE_ZEND_ALLOC=0
fi
# tests slower than TAGCACHE_SHOW_SLOW_MS (default 20 s under valgrind, 10 s
# otherwise) are listed at the end with their time: where CI's time goes
ARGS+=(--show-slow "${TAGCACHE_SHOW_SLOW_MS:-$([ "$MODE" = valgrind ] && echo 20000 || echo 10000)}")
LOG=$(mktemp)
php "$RUNTESTS" "${ARGS[@]}" ${JOBS[@]+"${JOBS[@]}"} "$@" 2>&1 | tee "$LOG"
RT_RC=${PIPESTATUS[0]}
num() { grep -aE "^$1" "$LOG" | head -1 | sed -E 's/[^:]*:[[:space:]]*([0-9]+).*/\1/'; }
PASSED=$(num "Tests passed"); FAILED=$(num "Tests failed"); SKIPPED=$(num "Tests skipped")
LEAKED=$(num "Tests leaked"); WARNED=$(num "Tests warned")
# run-tests.php lists borked tests (a broken section, a missing file) apart
BORKED=$(awk '/^BORKED TEST SUMMARY/{f=1; next} f && /^=+$/{if (n++) exit; next} f && NF && !/^-+$/ {c++} END {print c+0}' "$LOG")
# run-tests.php runs a timing-dependent test a second time when it fails
# (its own rule: sleep/usleep/microtime in the test, or "timed out" in the
# output; it has no switch to turn that off) and reports a pass on that
# retry as WARN. A test that passes only on retry is a defect, not a pass:
# those count as failures and are named below, as is any other warning.
RETRIED=$(grep -a "(warn: Test passed on retry attempt)" "$LOG" | grep -vc '^TEST ')
FAILED=$(( ${FAILED:-0} + ${LEAKED:-0} + ${WARNED:-0} + BORKED )); PASSED=${PASSED:-0}; SKIPPED=${SKIPPED:-0}
if [ -n "${STALE:-}" ]; then
	echo "scripts/valgrind-skip.txt: no test matches $(echo $STALE)"
	FAILED=$((FAILED + 1))
fi
# run-tests.php exits 0, or 1 when a test failed; killed (by a signal) or
# stopped by an error of its own, it prints no summary: that is a failure
# too, whatever the tests that finished did.
if [ "$RT_RC" -gt 1 ] || ! grep -aqE '^Tests passed' "$LOG"; then
	echo "run-tests.php did not finish (exit status $RT_RC)"
	FAILED=$((FAILED + 1))
fi
if [ "$RETRIED" -gt 0 ]; then
	echo "FAILED: passed only on run-tests' retry (counted as failures: find the race or the timing assumption):"
	grep -a "(warn: Test passed on retry attempt)" "$LOG" | grep -av '^TEST ' | sed 's/^/  /'
fi
rm -f "$LOG"
echo "$MODE: $PASSED passed, $FAILED failed, $SKIPPED skipped"
[ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
