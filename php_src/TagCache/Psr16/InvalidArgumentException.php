<?php
/* A key, a TTL or a value that TagCache\Psr16\Cache refuses. */

declare(strict_types=1);

namespace TagCache\Psr16;

class InvalidArgumentException extends \InvalidArgumentException implements \Psr\SimpleCache\InvalidArgumentException
{
}
