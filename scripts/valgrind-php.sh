#!/bin/sh
# The php that scripts/test.sh --valgrind hands to run-tests.php: the test
# process itself runs under memcheck; its errors and definite leaks go to
# stderr, which run-tests compares with the expected output, so any report
# (PCRE's JIT code is invisible to memcheck and reads past short subjects:
# it is switched off)
# fails the test. Processes a test starts (PHP_BINARY) run natively:
# tracing children breaks the setuid mount tests and multiplies the time.
DIR=$(cd "$(dirname "$0")" && pwd)
exec valgrind -q --tool=memcheck --leak-check=full --show-leak-kinds=definite \
	--errors-for-leak-kinds=definite --track-origins=no --num-callers=30 \
	--suppressions="$DIR/valgrind.supp" "${TAGCACHE_REAL_PHP:-/usr/bin/php}" -d pcre.jit=0 "$@"
