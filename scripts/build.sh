#!/bin/bash
# Build the extension in place with phpize: modules/tagcache.so.
#   scripts/build.sh            optimised, -Wall -Wextra -Werror
#   scripts/build.sh --asan     AddressSanitizer build (tests then need
#                               LD_PRELOAD of libasan; scripts/test.sh --asan)
#   scripts/build.sh --debug    -O0, for gdb
set -euo pipefail
cd "$(dirname "$0")/.."
CFLAGS="-O2 -g -Wall -Wextra -Werror"
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
if [ ! -f Makefile ] || [ configure -nt Makefile ] || [ "$(cat .build-flags 2>/dev/null)" != "$CFLAGS" ]; then
	./configure --enable-tagcache CFLAGS="$CFLAGS" LDFLAGS="$LDFLAGS" >/dev/null
	make clean >/dev/null
	echo "$CFLAGS" > .build-flags
fi
make -j"$(nproc)" >/dev/null
echo "built modules/tagcache.so ($CFLAGS)"
