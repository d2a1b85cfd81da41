#!/usr/bin/env bash
# Same as `php benchmark/bench.php "$@"` (PHP=/path/to/php to choose the binary).
exec "${PHP:-php}" "$(dirname "$0")/bench.php" "$@"
