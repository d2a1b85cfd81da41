<?php
/* A key, a tag, an expiry or an item that TagCache\Psr6\TagAwarePool refuses. */

declare(strict_types=1);

namespace TagCache\Psr6;

class InvalidArgumentException extends \InvalidArgumentException implements \Psr\Cache\InvalidArgumentException
{
}
