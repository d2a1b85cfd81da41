#!/bin/sh
# Regenerate ext/*_arginfo.h from ext/*.stub.php without internet access:
# gen_stub.php wants PHP-Parser 4.15.1 beside itself; Debian's php-parser
# package ships the same library under /usr/share/php/PhpParser.
set -eu
cd "$(dirname "$0")/.."
GEN=$(php-config --extension-dir | sed 's,/[^/]*$,,')/$(basename "$(php-config --extension-dir)")/build/gen_stub.php
[ -f "$GEN" ] || GEN=$(dirname "$(php-config --phpize 2>/dev/null || command -v phpize)")/../lib/php/build/gen_stub.php
[ -f "$GEN" ] || { echo "gen_stub.php not found (install php8.2-dev)" >&2; exit 1; }
[ -d /usr/share/php/PhpParser ] || { echo "install Debian's php-parser package" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cp "$GEN" "$TMP/gen_stub.php"
mkdir -p "$TMP/PHP-Parser-4.15.1/lib"
ln -s /usr/share/php/PhpParser "$TMP/PHP-Parser-4.15.1/lib/PhpParser"
php "$TMP/gen_stub.php" -f ext/tagcache.stub.php
