<?php
/* A key, a TTL or a value that TagCache\Psr16\Cache refuses. */

namespace TagCache\Psr16;

class InvalidArgumentException extends \InvalidArgumentException implements \Psr\SimpleCache\InvalidArgumentException
{
}
