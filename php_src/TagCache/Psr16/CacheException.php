<?php
/* The backend failed (a TagCache\Exception, kept as getPrevious()). */

namespace TagCache\Psr16;

class CacheException extends \RuntimeException implements \Psr\SimpleCache\CacheException
{
}
