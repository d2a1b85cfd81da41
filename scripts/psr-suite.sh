#!/bin/bash
# Debian's PSR integration suites (php-cache-integration-tests: the PSR-16,
# PSR-6 and tag-aware pool suites) with PHPUnit against TagCache\Psr16\Cache
# and TagCache\Psr6\TagAwarePool, once per native backend class that
# modules/tagcache.so has. Skipped cases must be exactly those listed in
# tests/psr/SKIPPED.md. Ends with one line "phpunit: N passed, N failed,
# N skipped" (PHPUnit's own counts, summed), which scripts/check.sh adds to
# its totals. Exits non-zero when anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
MODULE="$PWD/modules/tagcache.so"
PHPUNIT=${PHPUNIT:-/usr/bin/phpunit}
fail() { echo "psr-suite: $*" >&2; echo "phpunit: 0 passed, 1 failed, 0 skipped"; exit 1; }
[ -f "$MODULE" ] || fail "no $MODULE: run scripts/build.sh"
[ -f "$PHPUNIT" ] || fail "no $PHPUNIT (Debian package phpunit, installed by scripts/setup.sh)"
[ -f /usr/share/php/Cache/IntegrationTests/SimpleCacheTest.php ] \
	|| fail "no php-cache-integration-tests (installed by scripts/setup.sh)"

PHP=(php -d "extension=$MODULE" -d error_reporting=-1 -d display_errors=1 -d memory_limit=512M)
natives=$("${PHP[@]}" -r 'require "tests/zend/zend.inc"; echo implode(" ", array_keys(tcz_available()));') \
	|| fail "cannot list the native backends"
[ -n "$natives" ] || fail "no native backend class"

TMP=$(mktemp -d /tmp/tagcache-psr.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# The backends' runs go side by side: the suites mostly sleep (their
# expiry cases wait for seconds to pass), and each run has its own store
# (tcp_backend(): named after PHPUnit's pid). Their output is printed one
# after the other.
i=0
for native in $natives; do
	mkdir "$TMP/$i"
	(
		TAGCACHE_PSR_NATIVE="$native" "${PHP[@]}" "$PHPUNIT" --colors=never --do-not-cache-result \
			--bootstrap tests/psr/phpunit/bootstrap.php --log-junit "$TMP/$i/junit.xml" tests/psr/phpunit \
			>"$TMP/$i/out" 2>&1
		echo $? >"$TMP/$i/rc"
	) &
	i=$((i + 1))
done
wait
passed=0; failed=0; skipped=0
i=0
for native in $natives; do
	echo "== PSR integration suites on $native"
	cat "$TMP/$i/out"
	rc=$(cat "$TMP/$i/rc" 2>/dev/null || echo 255)
	junit="$TMP/$i/junit.xml"
	i=$((i + 1))
	if [ ! -s "$junit" ]; then
		echo "psr-suite: PHPUnit wrote no report for $native (exit $rc)" >&2
		failed=$((failed + 1))
		continue
	fi
	# counts, and the skipped cases as "Suite::test" (data sets folded into their test)
	read -r t f e s <<<"$(php -r '
		$x = simplexml_load_file($argv[1]);
		$a = $x->testsuite[0]->attributes();
		echo (int)$a->tests, " ", (int)$a->failures + (int)($a->warnings ?? 0), " ", (int)$a->errors, " ", (int)$a->skipped, "\n";
		$out = [];
		foreach ($x->xpath("//testcase[skipped]") as $tc) {
			$suite = preg_replace("/IntegrationTest$/", "Test", (string)$tc["class"]);
			$out[] = $suite . "::" . preg_replace("/ with data set.*/", "", (string)$tc["name"]);
		}
		$out = array_unique($out);
		sort($out);
		file_put_contents($argv[2], implode("\n", $out) . ($out ? "\n" : ""));
	' "$junit" "$TMP/skipped.txt")"
	passed=$((passed + t - f - e - s)); failed=$((failed + f + e)); skipped=$((skipped + s))
	listed=$(sed -nE 's/^- `([A-Za-z]+::[A-Za-z0-9_]+)`: .*/\1/p' tests/psr/SKIPPED.md | sort -u)
	if [ "$listed" != "$(cat "$TMP/skipped.txt")" ]; then
		echo "psr-suite: on $native the skipped cases differ from tests/psr/SKIPPED.md:" >&2
		diff <(echo "$listed") "$TMP/skipped.txt" >&2
		failed=$((failed + 1))
	fi
	if [ "$rc" -ne 0 ] && [ $((f + e)) -eq 0 ]; then
		echo "psr-suite: PHPUnit exited $rc on $native" >&2
		failed=$((failed + 1))
	fi
done
echo "phpunit: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
