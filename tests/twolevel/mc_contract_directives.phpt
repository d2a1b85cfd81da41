--TEST--
TwoLevel over Memcached, Backend contract: options, directives, getOption()/setOption()
--EXTENSIONS--
tagcache
--SKIPIF--
<?php
require __DIR__ . '/mc_contract_factory.inc';
if (($r = tl_mc_skip_reason()) !== null) die("skip $r");
?>
--INI--
; PCRE's JIT reads past short subjects under valgrind
pcre.jit=0
--FILE--
<?php
require __DIR__ . '/mc_contract_factory.inc';
require __DIR__ . '/../contract/directives.inc';
?>
--CLEAN--
<?php
require __DIR__ . '/mc_contract_factory.inc';
tc_contract_clean();
?>
--EXPECT--
# constructor with a non-string option name
ok: new backend([1 => bar]) throws TagCache\ConfigurationException
ok: which is a TagCache\Exception
ok: which is a RuntimeException
ok: new backend([0 => lifetime]) throws TagCache\ConfigurationException
# constructor ignores unknown option names
ok: unknown constructor options are accepted
ok: the backend works
ok: load(foo)
# constructor option names are case-insensitive
ok: new backend([LIFETIME => '120']): getOption('lifetime') is 120
ok: new backend([LIFETIME => '120']): a save lives 120 s
ok: new backend([LifeTime => '120']): getOption('lifetime') is 120
ok: new backend([LifeTime => '120']): a save lives 120 s
ok: new backend([lifetime => '120']): getOption('lifetime') is 120
ok: new backend([lifetime => '120']): a save lives 120 s
# default lifetime directive
ok: getOption('lifetime') is 3600 by default
# setDirectives
ok: setDirectives([lifetime => 3600, logging => true]) works
ok: getOption('lifetime') is 3600
ok: setDirectives([lifetime => 7200]) works
ok: getOption('lifetime') is 7200
ok: a save then lives 7200 s
ok: setDirectives([lifetime => null]) works
ok: getOption('lifetime') is null
ok: setDirectives([logging => false]) works
ok: setDirectives without lifetime keeps the lifetime
ok: setDirectives([]) works
# setDirectives with a non-array
ok: setDirectives('foo') throws TypeError
# setDirectives with an unknown key
ok: setDirectives([foo => true, lifetime => 3600]) is accepted
ok: the known key was applied
# setDirectives with an int key
ok: setDirectives(['foo', lifetime => 10]) throws TagCache\ConfigurationException
ok: setDirectives([5 => 3600]) throws TagCache\ConfigurationException
ok: the backend still works after the rejected directives
# getOption
ok: getOption('LifeTime') is numeric
ok: getOption('LIFETIME') equals getOption('lifetime')
ok: getOption('foo') throws TagCache\ConfigurationException
ok: getOption('doesNotExist') throws TagCache\ConfigurationException
ok: getOption('') throws TagCache\ConfigurationException
# setOption
ok: setOption('lifetime', 50) works
ok: getOption('lifetime') is 50
ok: setOption('LIFETIME', 60) works
ok: getOption('lifetime') is 60 (name case-insensitive)
ok: a save then lives 60 s
ok: setOption('doesNotExist', 1) is ignored
ok: getOption('doesNotExist') still throws after setOption ignored it
# logging directive does not change behaviour
ok: save with logging on
ok: load with logging on
ok: load with logging off
done
