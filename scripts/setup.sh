#!/bin/bash
# Install what building, testing and benchmarking tagcache needs, from
# Debian 12's packages. Always runs apt-get when CI=true; elsewhere it
# skips apt when every package is already installed.
set -euo pipefail
PKGS=(
	build-essential autoconf pkg-config
	php8.2-cli php8.2-dev php8.2-fpm php-parser libfcgi-bin
	valgrind util-linux procps
	clang libclang-rt-14-dev llvm-14
	libhiredis-dev libmemcached-dev redis-server memcached
	redis-sentinel zlib1g-dev liblz4-dev libzstd-dev
	php-apcu php-redis php-memcached php-symfony-cache
	php-cache-integration-tests phpunit
	php-pear php-psr-simple-cache php-psr-cache php-cache-tag-interop composer
	gnuplot-nox
	chromium
)
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${CI:-}" = true ] || [ "${#missing[@]}" -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update
	apt-get install -y --no-install-recommends "${PKGS[@]}"
fi
# Debian's packages start their services; tests start their own on
# other ports, so the system ones are left as they are.
