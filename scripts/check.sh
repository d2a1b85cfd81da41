#!/bin/bash
# Every test: install, start redis-server and memcached on 127.0.0.1, a
# debug build (-O0 -Wall -Wextra -Werror) that also runs the native
# backends' contract suites, the optimised build (-O2 -Wall -Wextra
# -Werror) that every later stage uses, a build without the network
# backends, the phpt suite, the phpt suite again under valgrind
# (USE_ZEND_ALLOC=0), the PSR integration suites (PHPUnit), the package
# list, the pecl round trip, `make test` as packagers run it
# (scripts/make-test.sh: a tree built from the pecl tarball, none of the
# TAGCACHE_* variables set here, no server of the suite left running),
# then the C-level tests and fuzzers of the engines (tests/c/run.sh). At
# the end, no redis-server or memcached that a test started may still run. Prints the time each stage took, then ends with
# one line "N passed, N failed, N skipped"; exits non-zero when anything
# failed.
#   scripts/check.sh [--no-valgrind]
#
# The phpt runs go TAGCACHE_TEST_JOBS (default 2) tests at a time. The
# tests are written to run side by side: every segment, directory, key
# prefix, redis-server and php-fpm a test makes is named after the test and
# the pid running it, servers take free ports, and a --CLEAN-- only removes
# what belongs to processes that are gone. Tests that must not overlap
# would say so in --CONFLICTS-- (or a CONFLICTS file in their directory).
#
# The valgrind pass runs every phpt but those scripts/valgrind-skip.txt
# names, each with the tests under memcheck that cover its C code (the
# contract suites run there once per engine, not again per wrapper of
# it), and tests/benchmark/smoke.phpt, which skips itself there (it spawns
# many processes and checks no memory rule); only each test's --FILE--
# runs under memcheck, its --SKIPIF-- and --CLEAN-- run natively
# (scripts/valgrind-php.sh says why), TAGCACHE_VALGRIND_JOBS (default 3)
# tests at a time.
set -uo pipefail
cd "$(dirname "$0")/.."
VALGRIND=1
[ "${1:-}" = --no-valgrind ] && VALGRIND=0
JOBS=-j"${TAGCACHE_TEST_JOBS:-2}"
# under valgrind a test waits more (its servers, child processes that run
# natively, bounded waits) and the 2 CPUs idle between: one more at a time
VJOBS=-j"${TAGCACHE_VALGRIND_JOBS:-3}"

# the time of each stage, printed before the summary
STAGES=()
stage_t0=$SECONDS
check_t0=$SECONDS
lap() {
	STAGES+=("$(printf '%-34s %5d s' "$1" $((SECONDS - stage_t0)))")
	echo "[time] $1: $((SECONDS - stage_t0)) s"
	stage_t0=$SECONDS
}
print_stages() {
	echo "time per stage:"
	printf '  %s\n' "${STAGES[@]}"
	printf '  %-34s %5d s\n' "total" $((SECONDS - check_t0))
}

total_p=0; total_f=0; total_s=0
# a stage that stops the check: what ran so far, plus this failure
abort() {
	echo "$1"
	lap "$2"
	print_stages
	echo "$total_p passed, $((total_f + 1)) failed, $total_s skipped"
	exit 1
}

bash scripts/setup.sh || abort "setup failed" "setup (apt)"
lap "setup (apt)"

RUN=$(mktemp -d /tmp/tagcache-check.XXXXXX)
# the servers running before the tests (a system redis or memcached, other runs)
pgrep -x 'redis-server|redis-sentinel|memcached' 2>/dev/null > "$RUN/servers-before"
# kill returns before the server has exited: a redis-server still writing
# its log (or a memcached its pid file) into $RUN made rm -rf fail with
# "Directory not empty"; wait (at most 5 s) until each is gone first
cleanup() {
	local f pid
	for f in "$RUN/redis.pid" "$RUN/memcached.pid"; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		kill "$pid" 2>/dev/null || continue
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	done
	rm -rf "$RUN"
}
trap cleanup EXIT
export TAGCACHE_REDIS_PORT=${TAGCACHE_REDIS_PORT:-16379}
export TAGCACHE_MEMCACHED_PORT=${TAGCACHE_MEMCACHED_PORT:-21211}
redis-server --bind 127.0.0.1 --port "$TAGCACHE_REDIS_PORT" --save "" --appendonly no \
	--daemonize yes --pidfile "$RUN/redis.pid" --dir "$RUN" --logfile "$RUN/redis.log"
memcached -d -l 127.0.0.1 -p "$TAGCACHE_MEMCACHED_PORT" -U 0 -m 64 -u root -P "$RUN/memcached.pid"
for _ in $(seq 50); do
	redis-cli -p "$TAGCACHE_REDIS_PORT" ping >/dev/null 2>&1 && break
	sleep 0.1
done

# adds the counts of the last "<name>: N passed, N failed, N skipped" line
# of the output $1 of a step that exited with status $2; a missing line is
# one failure, and so is a non-zero exit status with no failure counted
add_counts() {
	local line f
	line=$(grep -aE '^[a-z-]+: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$1" | tail -1)
	if [ -z "$line" ]; then
		echo "(no summary line: counted as one failure)"
		total_f=$((total_f + 1))
		return
	fi
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "(exit status $2 with no failure counted: counted as one failure)"
		f=1
	fi
	total_p=$((total_p + $(echo "$line" | sed -E 's/^[a-z-]+: ([0-9]+) passed.*/\1/')))
	total_f=$((total_f + f))
	total_s=$((total_s + $(echo "$line" | sed -E 's/.* ([0-9]+) skipped.*/\1/')))
}
# a phpt run: scripts/test.sh's arguments
run() {
	local out rc
	out=$(mktemp)
	bash scripts/test.sh "$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	add_counts "$out" "$rc"
	rm -f "$out"
}
# Suites that are not phpt: each prints the same "<name>: N passed, N
# failed, N skipped" line (PHPUnit's counts for the PSR suites; one check
# for the package list; the steps of the pecl round trip; the C tests).
run_suite() {
	local out rc
	out=$(mktemp)
	bash "$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	add_counts "$out" "$rc"
	rm -f "$out"
}

# The debug build (STYLE.md: a debug build in CI): -O0 -g with -Wall
# -Wextra -Werror, since -O0 and -O2 warn about different things (the
# optimiser's analyses find some, hide others). Its module runs the native
# backends' contract suites once (about as long as the build). Debian's
# php is not a debug build (ZEND_DEBUG): the run-time arginfo/ZPP checks of
# a php-src --enable-debug build do not happen here. The optimised build
# below then replaces modules/tagcache.so for every later stage.
if bash scripts/build.sh --debug; then
	echo "debug build (-O0 -Wall -Wextra -Werror): ok"
	total_p=$((total_p + 1))
	lap "debug build (-O0)"
	contracts=()
	for f in tests/*/contract_*.phpt; do
		case "$f" in tests/zend/*) ;; *) contracts+=("$f") ;; esac   # zend: the adapters
	done
	run "$JOBS" "${contracts[@]}"
	lap "contract suites, -O0 module"
else
	echo "debug build (-O0 -Wall -Wextra -Werror): FAILED"
	total_f=$((total_f + 1))
	lap "debug build (-O0)"
fi

bash scripts/build.sh || abort "build failed" "build (-O2)"
# every compilation unit of the module the later stages load is -O2
# (gcc records its options in the DWARF of a -g build)
producers=$(readelf --debug-dump=info modules/tagcache.so 2>/dev/null | grep DW_AT_producer)
if [ -z "$producers" ] || echo "$producers" | grep -qv -- ' -O2 '; then
	abort "build: modules/tagcache.so is not all -O2: $(echo "$producers" | grep -v -- ' -O2 ' | head -1 | sed 's/.*): //')" "build (-O2)"
fi
lap "build (-O2)"

# The network backends are optional: a build without them compiles
# (-Werror) and has none of their classes. Built in a copy of the sources
# (configure without any --with-tagcache-*).
compile_out() {
	local dir ok=1
	dir=$(mktemp -d /tmp/tagcache-minimal.XXXXXX)
	mkdir "$dir/ext"
	cp config.m4 "$dir/" && cp ext/*.c ext/*.h ext/*.stub.php "$dir/ext/" || ok=0
	if [ "$ok" = 1 ]; then
		(cd "$dir" && phpize >/dev/null 2>&1 && ./configure --enable-tagcache CFLAGS="-O2 -Wall -Wextra -Werror" >/dev/null \
			&& make -j"$(nproc)" >/dev/null) || ok=0
	fi
	if [ "$ok" = 1 ] && php -n -d "extension=$dir/modules/tagcache.so" -r \
		'exit(class_exists("TagCache\\Shm") && !class_exists("TagCache\\Redis") && !class_exists("TagCache\\Memcached") ? 0 : 1);'; then
		echo "build without the network backends: ok (TagCache\\Redis and TagCache\\Memcached absent)"
		total_p=$((total_p + 1))
	else
		echo "build without the network backends: FAILED"
		total_f=$((total_f + 1))
	fi
	rm -rf "$dir"
}
compile_out
lap "build without network backends"

run "$JOBS" tests
lap "phpt"
if [ "$VALGRIND" = 1 ]; then
	run --valgrind "$VJOBS" tests
	lap "phpt under valgrind"
fi
run_suite scripts/psr-suite.sh
lap "PSR suites (PHPUnit)"
run_suite scripts/check-package.sh
lap "package list"
run_suite scripts/pecl-smoke.sh
lap "pecl round trip"
run_suite scripts/make-test.sh
lap "make test (pecl tarball, no env)"
# The engines in C without PHP, under ASan+UBSan: unit/model/fork/crash/
# corruption tests, then each libFuzzer harness (side by side) for a fixed
# budget of TAGCACHE_FUZZ_SECONDS (10 s; longer runs by hand:
# tests/c/run.sh --fuzz 600). tests/c/run.sh ends with "c: N passed, ...".
run_suite tests/c/run.sh --fuzz "${TAGCACHE_FUZZ_SECONDS:-10}"
lap "C tests and fuzzers"

# No server a test started outlives it (tests/redis/redis.inc's watchdog):
# a redis-server, redis-sentinel or memcached whose test directory
# (tagcache-redis-<test>-<pid>) names a process that is gone.
leftover_servers() {
	local p text owner
	for p in $(pgrep -x 'redis-server|redis-sentinel|memcached' 2>/dev/null); do
		text="$(tr '\0' ' ' 2>/dev/null < "/proc/$p/cmdline") $(readlink "/proc/$p/cwd" 2>/dev/null)"
		text="$text $(tr '\0' ' ' 2>/dev/null < "/proc/$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null)/cmdline")"
		owner=$(echo "$text" | grep -oE 'tcr-watchdog [0-9]+' | head -1 | awk '{print $2}')
		[ -n "$owner" ] || owner=$(echo "$text" | grep -oE 'tagcache-redis-[^ ]*-[0-9]+/' | head -1 | sed -E 's/.*-([0-9]+)\/$/\1/')
		[ -n "$owner" ] && [ ! -d "/proc/$owner" ] && ! grep -qx "$p" "$RUN/servers-before" && echo "$p"
	done
}
for _ in $(seq 50); do
	[ -z "$(leftover_servers)" ] && break
	sleep 0.1
done
left=$(leftover_servers)
if [ -z "$left" ]; then
	echo "servers: ok: no redis-server or memcached of a test left running"
	total_p=$((total_p + 1))
else
	echo "servers: FAILED: left running by tests that ended:"
	for p in $left; do echo "  $p: $(tr '\0' ' ' 2>/dev/null < "/proc/$p/cmdline")"; done
	total_f=$((total_f + 1))
fi

print_stages
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ] && [ "$total_p" -gt 0 ]
