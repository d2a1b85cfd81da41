<?php
/* The backend failed (a TagCache\Exception, kept as getPrevious()). */

namespace TagCache\Psr6;

class CacheException extends \RuntimeException implements \Psr\Cache\CacheException
{
}
