#!/bin/bash
# Every test: install, build (-Wall -Wextra -Werror), start redis-server and
# memcached on 127.0.0.1, run the phpt suite, then run it again under
# valgrind (USE_ZEND_ALLOC=0). Ends with one line "N passed, N failed".
#   scripts/check.sh [--no-valgrind]
set -uo pipefail
cd "$(dirname "$0")/.."
VALGRIND=1
[ "${1:-}" = --no-valgrind ] && VALGRIND=0
bash scripts/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }
bash scripts/build.sh || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }

RUN=$(mktemp -d /tmp/tagcache-check.XXXXXX)
cleanup() {
	[ -f "$RUN/redis.pid" ] && kill "$(cat "$RUN/redis.pid")" 2>/dev/null
	[ -f "$RUN/memcached.pid" ] && kill "$(cat "$RUN/memcached.pid")" 2>/dev/null
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

total_p=0; total_f=0; total_s=0
run() {
	local out line
	out=$(mktemp)
	bash scripts/test.sh "$@" 2>&1 | tee "$out"
	line=$(grep -E '^[a-z]+: [0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
	rm -f "$out"
	if [ -z "$line" ]; then
		total_f=$((total_f + 1))
		return
	fi
	total_p=$((total_p + $(echo "$line" | sed -E 's/^[a-z]+: ([0-9]+) passed.*/\1/')))
	total_f=$((total_f + $(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
	total_s=$((total_s + $(echo "$line" | sed -E 's/.* ([0-9]+) skipped.*/\1/')))
}
# The network backends are optional: a build without them compiles
# (-Werror) and has none of their classes. Built in a copy of the sources.
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
		'exit(class_exists("TagCache\\Shm") && !class_exists("TagCache\\Redis") ? 0 : 1);'; then
		echo "build without the network backends: ok (TagCache\\Redis absent)"
		total_p=$((total_p + 1))
	else
		echo "build without the network backends: FAILED"
		total_f=$((total_f + 1))
	fi
	rm -rf "$dir"
}
compile_out
run tests
if [ "$VALGRIND" = 1 ]; then
	run --valgrind tests
fi
# Suites that are not phpt: each prints the same "<name>: N passed, N
# failed, N skipped" line (PHPUnit's counts for the PSR suites; one check
# for the package list; the steps of the pecl round trip).
run_suite() {
	local out line
	out=$(mktemp)
	bash "$@" 2>&1 | tee "$out"
	line=$(grep -E '^[a-z]+: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$out" | tail -1)
	rm -f "$out"
	if [ -z "$line" ]; then
		total_f=$((total_f + 1))
		return
	fi
	total_p=$((total_p + $(echo "$line" | sed -E 's/^[a-z]+: ([0-9]+) passed.*/\1/')))
	total_f=$((total_f + $(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
	total_s=$((total_s + $(echo "$line" | sed -E 's/.* ([0-9]+) skipped.*/\1/')))
}
run_suite scripts/psr-suite.sh
run_suite scripts/check-package.sh
run_suite scripts/pecl-smoke.sh
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ] && [ "$total_p" -gt 0 ]
