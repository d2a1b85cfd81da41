#!/bin/bash
# The pecl round trip, on this machine, offline: `pecl package` builds the
# tarball from package.xml, `pecl install` builds and installs it from the
# local .tgz (the module into the extension dir, php_src/TagCache/** into
# PEAR's php_dir, on Debian /usr/share/php, which is on PHP's default
# include_path), then: the installed module loads with no startup warning
# (alone and with the system php.ini), and a smoke test runs against the
# installed copy: TagCache_Zend_Shm found through the include_path by a
# Varien-style autoloader, behind a Zend_Cache_Core, and the PSR-16 cache.
# Finally `pecl uninstall` removes it and the script checks that the
# extension dir and PEAR's directories are as they were (PEAR bookkeeping
# files this run created are removed too).
#
# It refuses to run (a skip, with the reason) when tagcache is already
# installed on the machine, so it never replaces or removes a real install.
# Runs of it on the same machine take turns (flock). Ends with one line
# "pecl: N passed, N failed, N skipped" for scripts/check.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
pass=0; fail=0; skip=0
ok() { echo "pecl: ok: $*"; pass=$((pass + 1)); }
bad() { echo "pecl: FAILED: $*" >&2; fail=$((fail + 1)); }
finish() { echo "pecl: $pass passed, $fail failed, $skip skipped"; [ "$fail" -eq 0 ]; exit $?; }

command -v pecl >/dev/null || { bad "no pecl (Debian package php-pear, installed by scripts/setup.sh)"; finish; }
VERSION=$(sed -n 's:.*<release>\(.*\)</release>.*:\1:p' package.xml | head -1)
EXT_DIR=$(php-config --extension-dir)
TMP=$(mktemp -d /tmp/tagcache-pecl.XXXXXX)
exec 9<"$EXT_DIR"   # runs of this script take turns; the lock is on the directory (no file left behind)
flock 9
created=()
restore_bookkeeping() {
	local p
	for p in "${created[@]}"; do
		case "$p" in
		/tmp/*) rm -rf "$p" ;;                      # PEAR's temp dir, made by this run
		*) if [ -d "$p" ]; then rmdir "$p" 2>/dev/null; else rm -f "$p"; fi ;;
		esac
	done
}
installed=0
# Interrupted between install and uninstall: uninstall anyway.
trap '[ "$installed" = 1 ] && "${PECL[@]}" uninstall tagcache >/dev/null 2>&1; restore_bookkeeping; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP
PECL=(pecl -d "temp_dir=$TMP/pear-temp" -d "download_dir=$TMP/pear-download" -d "cache_dir=$TMP/pear-cache")
snapshot() {
	{ ls -1 "$EXT_DIR"; find "$PHP_DIR" -maxdepth 1 | sort;
	  find "$DOC_DIR" "$TEST_DIR" -maxdepth 1 2>/dev/null | sort; } > "$1"
}

# PEAR's directories, read without running pecl: any pecl command writes
# PEAR bookkeeping (.depdb), which must be noted as absent first.
read -r PHP_DIR DOC_DIR TEST_DIR PEAR_TEMP < <(php -r 'require "PEAR/Config.php"; $c = PEAR_Config::singleton();
	echo $c->get("php_dir"), " ", $c->get("doc_dir"), " ", $c->get("test_dir"), " ", $c->get("temp_dir"), "\n";')
[ -n "${TEST_DIR:-}" ] || { bad "cannot read PEAR's configuration"; finish; }

# What PEAR may create as bookkeeping; removed after uninstall only when
# this run created it.
BOOKKEEPING=("$PHP_DIR/.depdb" "$PHP_DIR/.depdblock" "$PHP_DIR/.filemap" "$PHP_DIR/.lock"
	"$PHP_DIR/.registry/.channel.pecl.php.net" "$DOC_DIR" "$TEST_DIR" "$(dirname "$PEAR_TEMP")")
for p in "${BOOKKEEPING[@]}"; do
	[ -e "$p" ] || created+=("$p")
done

snapshot "$TMP/before"

if "${PECL[@]}" list 2>/dev/null | grep -qi '^tagcache '; then
	echo "pecl: skipped: tagcache is already installed with pecl here; this check installs and uninstalls it and leaves a real install alone"
	skip=1; finish
fi
if [ -e "$EXT_DIR/tagcache.so" ] || [ -e "$PHP_DIR/TagCache" ]; then
	echo "pecl: skipped: $EXT_DIR/tagcache.so or $PHP_DIR/TagCache exists (installed by other means); this check leaves it alone"
	skip=1; finish
fi

# 1. pecl package
( cd "$TMP" && "${PECL[@]}" package "$ROOT/package.xml" ) > "$TMP/package.log" 2>&1
if [ -f "$TMP/tagcache-$VERSION.tgz" ]; then
	ok "pecl package: tagcache-$VERSION.tgz ($(tar tzf "$TMP/tagcache-$VERSION.tgz" | wc -l) entries)"
else
	bad "pecl package made no tarball:"; cat "$TMP/package.log" >&2; finish
fi

# 2. pecl install, from the local tarball
installed=1   # from here on, an interrupted run uninstalls on exit
if MAKEFLAGS="-j$(nproc)" "${PECL[@]}" install "$TMP/tagcache-$VERSION.tgz" > "$TMP/install.log" 2>&1 \
	&& grep -q "install ok: channel://pecl.php.net/tagcache-$VERSION" "$TMP/install.log"; then
	ok "pecl install built and installed tagcache $VERSION"
else
	bad "pecl install failed:"; tail -30 "$TMP/install.log" >&2
fi

# 3. what it installed
missing=""
for f in "$EXT_DIR/tagcache.so" "$PHP_DIR/TagCache/Zend/Shm.php" "$PHP_DIR/TagCache/Zend/Backend.php" \
	"$PHP_DIR/TagCache/Psr16/Cache.php" "$PHP_DIR/TagCache/Psr6/TagAwarePool.php" \
	"$TEST_DIR/tagcache/tests/zend/fixtures/zf1.php"; do
	[ -f "$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && ok "installed: the module in $EXT_DIR, php_src as $PHP_DIR/TagCache/..., the tests" \
	|| bad "not installed:$missing"

# 4. the installed module loads with no startup warning: alone, and with the system php.ini
out=$(php -n -d extension=tagcache.so -r 'echo phpversion("tagcache");' 2>&1)
out2=$(php -d extension=tagcache.so -r 'echo phpversion("tagcache");' 2>&1)
if [ "$out" = "$VERSION" ] && [ "$out2" = "$VERSION" ]; then
	ok "php -d extension=tagcache.so loads version $VERSION with nothing else printed (with and without php.ini)"
else
	bad "loading the installed module printed: [$out] [$out2]"
fi

# 5. smoke test against the installed copy: nothing from this checkout on the include_path
SEG="tagcache-pecl-smoke.$$"
cat > "$TMP/smoke.php" <<'PHP'
<?php
// The installed copy only: PHP's default include_path, the installed Zend fixture.
[$self, $testDir, $phpDir, $seg, $version] = $argv;
require "$testDir/tagcache/tests/zend/fixtures/zf1.php";
spl_autoload_register(function ($class) {   // Varien_Autoload's rule
    $file = str_replace(' ', '/', ucwords(str_replace('_', ' ', $class))) . '.php';
    if (stream_resolve_include_path($file) !== false) {
        include $file;
    }
});
$fail = function ($what) { fwrite(STDERR, "smoke: $what\n"); exit(1); };
phpversion('tagcache') === $version || $fail('module version ' . phpversion('tagcache'));
class_exists('TagCache_Zend_Shm', true) || $fail('TagCache_Zend_Shm not found through the include_path ' . get_include_path());
$file = (new ReflectionClass('TagCache_Zend_Shm'))->getFileName();
$file === "$phpDir/TagCache/Zend/Shm.php" || $fail("TagCache_Zend_Shm came from $file");
in_array('Zend_Cache_Backend_Interface', class_implements('TagCache_Zend_Shm', true)) || $fail('no Zend_Cache_Backend_Interface');
$core = Zend_Cache::factory('Varien_Cache_Core', 'TagCache_Zend_Shm', ['cache_id_prefix' => 'a1b_'],
    ['segment' => $seg, 'size' => '8M', 'lifetime' => '7200'], true, true, true);
$core->save('<html>', 'PAGE', ['MAGE']) || $fail('save');
$core->load('PAGE') === '<html>' || $fail('load');
$core->clean('matchingAnyTag', ['MAGE']) || $fail('clean');
$core->load('PAGE') === false || $fail('clean left the entry');
if (stream_resolve_include_path('Psr/SimpleCache/autoload.php') !== false) {
    require 'Psr/SimpleCache/autoload.php';
    spl_autoload_register(function ($class) {
        $file = str_replace('\\', '/', $class) . '.php';
        if (str_starts_with($class, 'TagCache\\Psr') && stream_resolve_include_path($file) !== false) {
            include $file;
        }
    });
    $psr = new TagCache\Psr16\Cache($core->getBackend());
    $psr->set('k.1', [1, 2]) && $psr->get('k.1') === [1, 2] || $fail('PSR-16');
}
echo "smoke ok: $file\n";
PHP
if out=$(cd "$TMP" && php -n -d extension=tagcache.so -d display_errors=stderr -d error_reporting=-1 \
	"$TMP/smoke.php" "$TEST_DIR" "$PHP_DIR" "$SEG" "$VERSION" 2>&1) && [ "${out#smoke ok}" != "$out" ]; then
	ok "installed copy: TagCache_Zend_Shm from the include_path behind Zend_Cache_Core, and TagCache\\Psr16\\Cache ($out)"
else
	bad "smoke test against the installed copy: $out"
fi
rm -f "/dev/shm/tagcache.$SEG"

# 6. pecl uninstall, and the machine as it was
"${PECL[@]}" uninstall tagcache > "$TMP/uninstall.log" 2>&1
if grep -q "uninstall ok: channel://pecl.php.net/tagcache-$VERSION" "$TMP/uninstall.log"; then
	installed=0
	ok "pecl uninstall tagcache"
else
	bad "pecl uninstall failed:"; cat "$TMP/uninstall.log" >&2
fi
restore_bookkeeping
snapshot "$TMP/after"
if diff -u "$TMP/before" "$TMP/after" > "$TMP/diff"; then
	ok "after uninstall the extension dir and PEAR's directories are as before"
else
	bad "left behind after uninstall:"; cat "$TMP/diff" >&2
fi
finish
