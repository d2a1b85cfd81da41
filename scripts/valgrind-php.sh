#!/bin/sh
# The php that scripts/test.sh --valgrind hands to run-tests.php: the test
# process itself runs under memcheck; its errors and definite leaks go to
# stderr, which run-tests compares with the expected output, so any report
# (PCRE's JIT code is invisible to memcheck and reads past short subjects:
# it is switched off)
# fails the test. Processes a test starts (PHP_BINARY) run natively:
# tracing children breaks the setuid mount tests and multiplies the time.
#
# A test's --SKIPIF-- and --CLEAN-- scripts (run-tests writes them as
# <test>.skip.php and <test>.clean.php) also run natively: none of them
# uses a tagcache class in its own process (they probe the environment,
# remove the files, segments and servers a run left, or start children,
# which run natively anyway), the module's load and unload are checked by
# the --FILE-- run of every test, and each php under memcheck costs 3-4 s
# of start-up alone (about 40% of the pass when they ran under it).
DIR=$(cd "$(dirname "$0")" && pwd)
REAL_PHP=${TAGCACHE_REAL_PHP:-/usr/bin/php}
for a in "$@"; do
	case "$a" in
	*.skip.php | *.clean.php) [ -f "$a" ] && exec "$REAL_PHP" "$@" ;;
	esac
done
exec valgrind -q --tool=memcheck --leak-check=full --show-leak-kinds=definite \
	--errors-for-leak-kinds=definite --track-origins=no --num-callers=30 \
	--suppressions="$DIR/valgrind.supp" "$REAL_PHP" -d pcre.jit=0 "$@"
