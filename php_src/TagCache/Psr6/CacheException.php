<?php
/* The backend failed (a TagCache\Exception, kept as getPrevious()). */

declare(strict_types=1);

namespace TagCache\Psr6;

class CacheException extends \RuntimeException implements \Psr\Cache\CacheException
{
}
