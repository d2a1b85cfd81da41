#!/bin/bash
# The packager's check: `make test` as PHP packagers and distributions run
# it (Debian's dh-php runs `make test`), in a tree built the pecl way from
# the pecl tarball (`pecl package`, then phpize, configure, make, as `pecl
# install` does; configure --with-tagcache-redis --with-tagcache-memcached),
# with no TAGCACHE_* variable set: every test finds or starts what it needs
# by itself, or skips saying why. Then:
#  - no redis-server, redis-sentinel or memcached that the suite started is
#    still running (one whose test process is gone counts as a failure, and
#    is stopped);
#  - run as root, a few server tests run again as another user (nobody):
#    memcached without -u, redis-server as that user.
# Ends with one line "make-test: N passed, N failed, N skipped" (the phpt
# counts, plus one check for the build, one for no server left behind, and
# the tests run as nobody) for scripts/check.sh.
#   scripts/make-test.sh
# TAGCACHE_TEST_JOBS (default 2): `make test TESTS="-jN --shuffle"`
# (unshuffled, run-tests hands each worker 32 tests at a time, and one
# worker is left alone with the last batch; shuffled, 4: scripts/test.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
pass=0; fail=0; skip=0
ok() { echo "make-test: ok: $*"; pass=$((pass + 1)); }
bad() { echo "make-test: FAILED: $*"; fail=$((fail + 1)); }
finish() { echo "make-test: $pass passed, $fail failed, $skip skipped"; [ "$fail" -eq 0 ]; exit $?; }
# every TAGCACHE_* variable of this environment is unset for the suite
UNSET=()
for v in $(compgen -e); do
	case "$v" in TAGCACHE_*) UNSET+=(-u "$v") ;; esac
done

# Servers the tests start: a redis-server, redis-sentinel or memcached whose
# command line, working directory or parent (the watchdog of
# tests/redis/redis.inc) names a test's directory under the suite's own
# TMPDIR ($TMP/tmp: servers of anything else on the machine are not
# counted); prints "<pid> <test pid>".
suite_servers() {
	local p text owner
	for p in $(pgrep -x 'redis-server|redis-sentinel|memcached' 2>/dev/null); do
		text="$(tr '\0' ' ' 2>/dev/null < "/proc/$p/cmdline") $(readlink "/proc/$p/cwd" 2>/dev/null)"
		text="$text $(tr '\0' ' ' 2>/dev/null < "/proc/$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null)/cmdline")"
		case "$text" in *"$TMP/tmp/"*) ;; *) continue ;; esac
		owner=$(echo "$text" | grep -oE 'tcr-watchdog [0-9]+' | head -1 | awk '{print $2}')
		[ -n "$owner" ] || owner=$(echo "$text" | grep -oE 'tagcache-redis-[^ ]*-[0-9]+/' | head -1 | sed -E 's/.*-([0-9]+)\/$/\1/')
		[ -n "$owner" ] && echo "$p $owner"
	done
}
# those among them whose test process is gone and that were not there before ($1: a file of pids)
leftovers() {
	local p owner
	suite_servers | while read -r p owner; do
		grep -qx "$p" "$1" && continue
		[ -d "/proc/$owner" ] && continue
		echo "$p"
	done
}

command -v pecl >/dev/null || { bad "no pecl (Debian package php-pear, installed by scripts/setup.sh)"; finish; }
VERSION=$(sed -n 's:.*<release>\(.*\)</release>.*:\1:p' package.xml | head -1)
TMP=$(mktemp -d /tmp/tagcache-make-test.XXXXXX)
chmod 755 "$TMP"   # the build is read by the tests run as nobody
# the suite's temporary directory (sys_get_temp_dir()): what its servers name
mkdir -m 1777 "$TMP/tmp"
trap 'rm -rf "$TMP"' EXIT
PECL=(pecl -d "temp_dir=$TMP/pear-temp" -d "download_dir=$TMP/pear-download" -d "cache_dir=$TMP/pear-cache")

# 1. the tarball, built as pecl install builds it
SRC="$TMP/tagcache-$VERSION"
if ! (cd "$TMP" && "${PECL[@]}" package "$ROOT/package.xml") > "$TMP/package.log" 2>&1 \
	|| ! tar xzf "$TMP/tagcache-$VERSION.tgz" -C "$TMP"; then
	bad "pecl package:"; cat "$TMP/package.log"; finish
fi
if (cd "$SRC" && phpize && ./configure --with-php-config="$(command -v php-config)" \
	--with-tagcache-redis --with-tagcache-memcached && make -j"$(nproc)") > "$TMP/build.log" 2>&1; then
	ok "built from tagcache-$VERSION.tgz: phpize, configure --with-tagcache-redis --with-tagcache-memcached, make"
else
	bad "the build from the tarball:"; tail -30 "$TMP/build.log"; finish
fi

# 2. make test, no TAGCACHE_* variable
pgrep -x 'redis-server|redis-sentinel|memcached' 2>/dev/null > "$TMP/before" || true
t0=$SECONDS
env "${UNSET[@]}" TMPDIR="$TMP/tmp" NO_INTERACTION=1 make -C "$SRC" test TESTS="-j${TAGCACHE_TEST_JOBS:-2} --shuffle" > "$TMP/test.log" 2>&1
rc=$?
sed 's/\x1b\[[0-9;]*m//g' "$TMP/test.log" > "$TMP/test.txt"
num() { grep -aE "^Tests $1" "$TMP/test.txt" | head -1 | sed -E 's/[^:]*:[[:space:]]*([0-9]+).*/\1/'; }
p=$(num passed); f=$(num failed); s=$(num skipped); w=$(num warned); l=$(num leaked)
borked=$(awk '/^BORKED TEST SUMMARY/{f=1; next} f && /^=+$/{if (n++) exit; next} f && NF && !/^-+$/ {c++} END {print c+0}' "$TMP/test.txt")
if [ -z "$p" ]; then
	bad "make test printed no summary (exit status $rc):"; tail -30 "$TMP/test.txt"
else
	echo "make-test: make test took $((SECONDS - t0)) s: $p passed, $f failed, $s skipped, ${w:-0} warned, ${l:-0} leaked, $borked borked"
	pass=$((pass + p)); skip=$((skip + s)); fail=$((fail + f + ${w:-0} + ${l:-0} + borked))
	[ "$rc" -ne 0 ] && [ "$((f + ${w:-0} + ${l:-0} + borked))" -eq 0 ] && bad "make test exited $rc with no failure counted"
	grep -a 'SKIP ' "$TMP/test.txt" | sed -E 's/.*(SKIP )/\1/; s/^/make-test: /'
	for t in $(grep -aoE 'FAIL .*\[(tests/[^]]+)\]' "$TMP/test.txt" | sed -E 's/.*\[(tests\/[^]]+)\]$/\1/' | sort -u); do
		echo "make-test: FAILED: $t"
		head -40 "$SRC/${t%.phpt}.diff" 2>/dev/null | sed 's/^/    /'
	done
fi

# 3. nothing the suite started is still running (the watchdogs poll every 0.2 s)
for _ in $(seq 50); do
	[ -z "$(leftovers "$TMP/before")" ] && break
	sleep 0.1
done
left=$(leftovers "$TMP/before")
if [ -z "$left" ]; then
	ok "no redis-server, redis-sentinel or memcached of the suite left running"
else
	bad "left running after make test (stopped now):"
	for p in $left; do echo "    $p: $(tr '\0' ' ' < "/proc/$p/cmdline")"; kill -9 "$p" 2>/dev/null; done
fi

# 4. as another user: memcached without -u, redis-server as that user
USER_TESTS=(tests/memcached/190-test-servers-stopped.phpt tests/memcached/contract_save_load.phpt
	tests/redis/contract_save_load.phpt)
if [ "$(id -u)" -ne 0 ]; then
	echo "make-test: skipped: the tests as another user (nobody) need root to switch to it"
	skip=$((skip + 1))
elif ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1; then
	echo "make-test: skipped: the tests as another user need setpriv (util-linux) and a user nobody"
	skip=$((skip + 1))
else
	# run-tests writes beside itself and beside each test: a copy nobody owns
	mkdir "$TMP/as-nobody" && cp -r "$SRC/tests" "$SRC/run-tests.php" "$TMP/as-nobody/" && chown -R nobody "$TMP/as-nobody"
	pgrep -x 'redis-server|redis-sentinel|memcached' 2>/dev/null > "$TMP/before" || true
	out=$(cd "$TMP/as-nobody" && env "${UNSET[@]}" TMPDIR="$TMP/tmp" NO_INTERACTION=1 TAGCACHE_MODULE="$SRC/modules/tagcache.so" \
		setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups -- \
		php "$TMP/as-nobody/run-tests.php" -q -p "$(command -v php)" -d "extension=$SRC/modules/tagcache.so" "${USER_TESTS[@]}" 2>&1 \
		| sed 's/\x1b\[[0-9;]*m//g')
	for t in "${USER_TESTS[@]}"; do
		if echo "$out" | grep -aq "PASS .*\[$t\]"; then
			ok "as nobody: $t"
		else
			bad "as nobody: $t"; echo "$out" | grep -a "$t" | head -3; head -20 "$TMP/as-nobody/${t%.phpt}.diff" 2>/dev/null
		fi
	done
	for _ in $(seq 50); do
		[ -z "$(leftovers "$TMP/before")" ] && break
		sleep 0.1
	done
	left=$(leftovers "$TMP/before")
	[ -z "$left" ] || { bad "left running after the tests as nobody: $left"; kill -9 $left 2>/dev/null; }
fi
finish
