#!/bin/bash
# Build the extension in place with phpize: modules/tagcache.so.
#   scripts/build.sh            optimised, -Wall -Wextra -Werror
#   scripts/build.sh --asan     AddressSanitizer build (tests then need
#                               LD_PRELOAD of libasan; scripts/test.sh --asan)
#   scripts/build.sh --debug    -O0, for gdb
set -euo pipefail
cd "$(dirname "$0")/.."
CFLAGS="-O2 -g -Wall -Wextra -Werror"
# The network backends the default build includes; TAGCACHE_CONFIGURE_WITH=""
# builds without them (scripts/check.sh does once, to prove they compile out).
CONFIGURE_WITH=${TAGCACHE_CONFIGURE_WITH-"--with-tagcache-redis --with-tagcache-memcached"}
LDFLAGS=""
case "${1:-}" in
	--asan) CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address -Wall -Wextra -Werror"; LDFLAGS="-fsanitize=address" ;;
	--debug) CFLAGS="-O0 -g -Wall -Wextra -Werror" ;;
	"") ;;
	*) echo "usage: $0 [--asan|--debug]" >&2; exit 2 ;;
esac
if [ ! -f configure ] || [ config.m4 -nt configure ]; then
	phpize >/dev/null
fi
if [ ! -f Makefile ] || [ configure -nt Makefile ] || [ "$(cat .build-flags 2>/dev/null)" != "$CFLAGS $CONFIGURE_WITH" ]; then
	rm -f .build-flags   # a reconfigure that fails half-way is redone next time
	./configure --enable-tagcache $CONFIGURE_WITH CFLAGS="$CFLAGS" LDFLAGS="$LDFLAGS" >/dev/null
	make clean >/dev/null
	echo "$CFLAGS $CONFIGURE_WITH" > .build-flags
fi
make -j"$(nproc)" >/dev/null
echo "built modules/tagcache.so ($CFLAGS $CONFIGURE_WITH)"
