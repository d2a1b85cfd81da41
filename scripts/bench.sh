#!/bin/bash
# The main job: install, build, and run the Magento cache benchmark.
#   scripts/bench.sh            shm beside APCu, forked clients (~2 minutes)
#   scripts/bench.sh --all      every backend and peer; starts redis-server and
#                               memcached on 127.0.0.1 and stops them after
# Any other flags go to benchmark/bench.php (see benchmark/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
export TAGCACHE_MODULE="$PWD/modules/tagcache.so"
exec php benchmark/bench.php "$@"
