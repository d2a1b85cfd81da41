#!/bin/bash
# package.xml must list every git-tracked file that ships in the pecl
# tarball, and nothing else. Shipped: config.m4, config.w32, ext/**,
# php_src/bin/* (role="script", installed into PEAR's bin_dir by its name),
# php_src/** (TagCache/** with role="php", installed into PEAR's php_dir as
# TagCache/..., so on the default include_path), tests/** (role="test"),
# README.md, TECHNOTES.md, LICENSE*, composer.json. Not shipped: .ci/,
# scripts/, benchmark/, dotfiles, package.xml itself.
#   scripts/check-package.sh           check; prints "package: N passed, N failed, 0 skipped"
#   scripts/check-package.sh --write   rewrite the <contents> and <filelist> of package.xml
set -uo pipefail
cd "$(dirname "$0")/.."
if ! git ls-files > /tmp/tagcache-tracked.$$ 2>/dev/null || [ ! -s /tmp/tagcache-tracked.$$ ]; then
	# A release tarball or a plain copy: which files are tracked is unknown,
	# so only one direction can be checked: every file package.xml lists is here.
	rm -f /tmp/tagcache-tracked.$$
	[ "${1:-check}" = --write ] && { echo "check-package: --write needs a git checkout (the tracked files)" >&2; exit 1; }
	php -r '
	$dom = new DOMDocument();
	if (!@$dom->load("package.xml")) { echo "package.xml is not well-formed XML\n"; echo "package: 0 passed, 1 failed, 1 skipped\n"; exit(1); }
	$missing = [];
	$walk = function (DOMElement $el, string $prefix) use (&$walk, &$missing) {
	    foreach ($el->childNodes as $c) {
	        if (!$c instanceof DOMElement) continue;
	        $name = trim($c->getAttribute("name"), "/");
	        if ($c->localName === "dir") $walk($c, $name === "" ? $prefix : $prefix . $name . "/");
	        elseif ($c->localName === "file" && !is_file($prefix . $name)) $missing[] = $prefix . $name;
	    }
	};
	foreach ($dom->getElementsByTagName("contents") as $contents) $walk($contents, "");
	foreach ($missing as $f) echo "check-package: listed in package.xml but not here: $f\n";
	echo "check-package: skipped: not a git checkout, so no list of tracked files to compare package.xml with (only checked that every file it lists is here)\n";
	printf("package: %d passed, %d failed, 1 skipped\n", $missing ? 0 : 1, $missing ? 1 : 0);
	exit($missing ? 1 : 0);
	'
	exit $?
fi
# git ls-files lists what is tracked; files added but not committed are included, deleted ones too (filtered below)
php -d error_reporting=-1 -r '
$mode = $argv[1];
$tracked = array_filter(file($argv[2], FILE_IGNORE_NEW_LINES), "file_exists");
unlink($argv[2]);

/** role of a tracked file in the tarball, or null when it does not ship */
function role(string $f): ?string {
    if ($f === "config.m4" || $f === "config.w32" || str_starts_with($f, "ext/")) return "src";
    if (str_starts_with($f, "php_src/TagCache/") && str_ends_with($f, ".php")) return "php";
    if (str_starts_with($f, "php_src/bin/")) return "script";
    if (str_starts_with($f, "php_src/")) return "doc";
    if (str_starts_with($f, "tests/")) return "test";
    if (in_array($f, ["README.md", "TECHNOTES.md", "composer.json"], true) || str_starts_with($f, "LICENSE")) return "doc";
    return null;
}
$ship = [];
foreach ($tracked as $f) {
    if (($r = role($f)) !== null) $ship[$f] = $r;
}
ksort($ship, SORT_STRING);

$xmlText = file_get_contents("package.xml");
if ($mode === "--write") {
    // nested <dir> elements, one per directory, as PEAR writes them
    $tree = [];
    foreach ($ship as $f => $r) {
        $node = &$tree;
        $parts = explode("/", $f);
        $base = array_pop($parts);
        foreach ($parts as $d) {
            $node[$d . "/"] ??= [];
            $node = &$node[$d . "/"];
        }
        $node[$base] = $r;
        unset($node);
    }
    $emit = function (array $node, int $depth) use (&$emit): string {
        $out = "";
        $pad = str_repeat(" ", $depth);
        ksort($node, SORT_STRING);
        foreach ($node as $k => $v) {
            if (is_array($v)) continue;
            $out .= "$pad<file name=\"$k\" role=\"$v\"/>\n";
        }
        foreach ($node as $k => $v) {
            if (!is_array($v)) continue;
            $out .= "$pad<dir name=\"" . rtrim($k, "/") . "\">\n" . $emit($v, $depth + 1) . "$pad</dir>\n";
        }
        return $out;
    };
    $contents = " <contents>\n  <dir name=\"/\">\n" . $emit($tree, 3) . "  </dir>\n </contents>";
    $filelist = "  <filelist>\n";
    foreach ($ship as $f => $r) {
        if ($r === "php") $filelist .= "   <install as=\"" . substr($f, strlen("php_src/")) . "\" name=\"$f\"/>\n";
        if ($r === "script") $filelist .= "   <install as=\"" . basename($f) . "\" name=\"$f\"/>\n";
    }
    $filelist .= "  </filelist>";
    $xmlText = preg_replace("~ <contents>.*?</contents>~s", $contents, $xmlText, 1, $c1);
    $xmlText = preg_replace("~  <filelist>.*?</filelist>~s", $filelist, $xmlText, 1, $c2);
    if ($c1 !== 1 || $c2 !== 1) { fwrite(STDERR, "package.xml has no <contents> or <filelist> to rewrite\n"); exit(1); }
    file_put_contents("package.xml", $xmlText);
    echo "package.xml: ", count($ship), " files\n";
    exit(0);
}

$dom = new DOMDocument();
if (!@$dom->loadXML($xmlText)) { echo "package.xml is not well-formed XML\n"; echo "package: 0 passed, 1 failed, 0 skipped\n"; exit(1); }
$listed = [];
$walk = function (DOMElement $el, string $prefix) use (&$walk, &$listed) {
    foreach ($el->childNodes as $c) {
        if (!$c instanceof DOMElement) continue;
        $name = trim($c->getAttribute("name"), "/");
        if ($c->localName === "dir") $walk($c, $name === "" ? $prefix : $prefix . $name . "/");
        elseif ($c->localName === "file") $listed[$prefix . $name] = $c->getAttribute("role");
    }
};
foreach ($dom->getElementsByTagName("contents") as $contents) $walk($contents, "");
$installAs = [];
foreach ($dom->getElementsByTagName("install") as $i) $installAs[$i->getAttribute("name")] = $i->getAttribute("as");

$problems = [];
foreach ($ship as $f => $r) {
    if (!isset($listed[$f])) $problems[] = "tracked but missing from package.xml: $f";
    elseif ($listed[$f] !== $r) $problems[] = "$f has role \"{$listed[$f]}\", expected \"$r\"";
    if ($r === "php" && ($installAs[$f] ?? null) !== substr($f, strlen("php_src/")))
        $problems[] = "$f needs <install as=\"" . substr($f, strlen("php_src/")) . "\"> in <filelist>";
    if ($r === "script" && ($installAs[$f] ?? null) !== basename($f))
        $problems[] = "$f needs <install as=\"" . basename($f) . "\"> in <filelist>";
}
foreach ($listed as $f => $r) {
    if (!isset($ship[$f])) $problems[] = "listed in package.xml but not a tracked file that ships: $f";
}
foreach ($problems as $p) echo "check-package: $p\n";
if ($problems) echo "check-package: run scripts/check-package.sh --write to regenerate the lists\n";
printf("package: %d passed, %d failed, 0 skipped\n", $problems ? 0 : 1, $problems ? 1 : 0);
exit($problems ? 1 : 0);
' -- "${1:-check}" /tmp/tagcache-tracked.$$
