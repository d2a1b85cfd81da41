<?php
/* The backend failed (a TagCache\Exception, kept as getPrevious()). */

declare(strict_types=1);

namespace TagCache\Psr16;

class CacheException extends \RuntimeException implements \Psr\SimpleCache\CacheException
{
}
