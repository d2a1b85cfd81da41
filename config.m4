dnl config.m4 for tagcache (phpize)

PHP_ARG_ENABLE([tagcache],
  [whether to enable tagcache],
  [AS_HELP_STRING([--enable-tagcache], [Enable tagcache cache backends])],
  [no])

dnl Room for the network engines; each adds its sources and library when given.
PHP_ARG_WITH([tagcache-redis],
  [for the tagcache Redis backend (hiredis)],
  [AS_HELP_STRING([[--with-tagcache-redis[=DIR]]], [tagcache: Redis backend through hiredis])],
  [no], [no])

PHP_ARG_WITH([tagcache-memcached],
  [for the tagcache memcached backend (libmemcached)],
  [AS_HELP_STRING([[--with-tagcache-memcached[=DIR]]], [tagcache: memcached backend through libmemcached])],
  [no], [no])

dnl lz4 and zstd are used when pkg-config finds them; --without-tagcache-lz4
dnl and --without-tagcache-zstd build without them (the suite passes on
dnl every such build: tests/redis/110 follows the codecs the build has).
PHP_ARG_WITH([tagcache-lz4],
  [whether to look for liblz4 (tagcache Redis compression)],
  [AS_HELP_STRING([--without-tagcache-lz4], [tagcache: no lz4 codec for the Redis backend])],
  [yes], [no])

PHP_ARG_WITH([tagcache-zstd],
  [whether to look for libzstd (tagcache Redis compression)],
  [AS_HELP_STRING([--without-tagcache-zstd], [tagcache: no zstd codec for the Redis backend])],
  [yes], [no])

dnl An optional codec for the Redis engine's compress_data, when pkg-config
dnl finds it: TC_REDIS_CODEC(pkg-config name, define)
AC_DEFUN([TC_REDIS_CODEC], [
  AC_MSG_CHECKING([for $1 (tagcache Redis compression)])
  if test "$PKG_CONFIG" != "no" && $PKG_CONFIG --exists $1; then
    AC_MSG_RESULT([yes])
    PHP_EVAL_INCLINE(`$PKG_CONFIG --cflags $1`)
    PHP_EVAL_LIBLINE(`$PKG_CONFIG --libs $1`, TAGCACHE_SHARED_LIBADD)
    AC_DEFINE([$2], 1, [tagcache: $1 is available for compress_data])
  else
    AC_MSG_RESULT([no])
  fi
])

if test "$PHP_TAGCACHE" != "no"; then
  AC_CHECK_FUNCS([posix_fallocate])
  AC_CHECK_LIB([pthread], [pthread_mutexattr_setrobust], [
    PHP_ADD_LIBRARY(pthread, 1, TAGCACHE_SHARED_LIBADD)
  ], [
    AC_MSG_ERROR([tagcache needs robust process-shared mutexes (pthread_mutexattr_setrobust)])
  ])

  TAGCACHE_SOURCES="ext/tagcache.c ext/tc_class.c ext/tc_engines.c ext/tc_options.c ext/tc_net.c ext/tc_hash.c \
    ext/tc_shm_seg.c ext/tc_shm_alloc.c ext/tc_shm.c ext/tc_shm_index.c ext/tc_shm_evict.c ext/tc_shm_recover.c ext/tc_util.c \
    ext/tc_file.c ext/tc_file_log.c ext/tc_file_index.c ext/tc_file_io.c ext/tc_file_store.c \
    ext/tc_file_rebuild.c ext/tc_file_compact.c \
    ext/tc_twolevel.c ext/tc_twolevel_node.c ext/tc_twolevel_opts.c ext/tc_file_journal.c \
    ext/tc_lease.c ext/tc_stale.c ext/tc_file_stale.c"

  if test "$PHP_TAGCACHE_REDIS" != "no"; then
    dnl hiredis through pkg-config; =DIR adds DIR's pkgconfig and include dirs.
    AC_PATH_PROG(PKG_CONFIG, pkg-config, no)
    if test "$PHP_TAGCACHE_REDIS" != "yes"; then
      PKG_CONFIG_PATH="$PHP_TAGCACHE_REDIS/lib/pkgconfig:$PHP_TAGCACHE_REDIS/lib64/pkgconfig:$PHP_TAGCACHE_REDIS/share/pkgconfig:$PKG_CONFIG_PATH"
      export PKG_CONFIG_PATH
    fi
    AC_MSG_CHECKING([for hiredis])
    if test "$PKG_CONFIG" != "no" && $PKG_CONFIG --exists hiredis; then
      TC_HIREDIS_CFLAGS=`$PKG_CONFIG --cflags hiredis`
      TC_HIREDIS_LIBS=`$PKG_CONFIG --libs hiredis`
      AC_MSG_RESULT([`$PKG_CONFIG --modversion hiredis`])
    elif test "$PHP_TAGCACHE_REDIS" != "yes" && test -r "$PHP_TAGCACHE_REDIS/include/hiredis/hiredis.h"; then
      TC_HIREDIS_CFLAGS="-I$PHP_TAGCACHE_REDIS/include"
      TC_HIREDIS_LIBS="-L$PHP_TAGCACHE_REDIS/lib -lhiredis"
      AC_MSG_RESULT([in $PHP_TAGCACHE_REDIS])
    else
      AC_MSG_RESULT([no])
      AC_MSG_ERROR([--with-tagcache-redis: hiredis not found (Debian: apt-get install libhiredis-dev, or give --with-tagcache-redis=DIR)])
    fi
    if test "$PHP_TAGCACHE_REDIS" != "yes"; then
      TC_HIREDIS_CFLAGS="$TC_HIREDIS_CFLAGS -I$PHP_TAGCACHE_REDIS/include"
    fi
    PHP_EVAL_INCLINE($TC_HIREDIS_CFLAGS)
    PHP_EVAL_LIBLINE($TC_HIREDIS_LIBS, TAGCACHE_SHARED_LIBADD)
    AC_DEFINE(HAVE_TAGCACHE_REDIS, 1, [tagcache: the Redis backend is built])
    dnl Optional codecs for compress_data: each one that pkg-config finds.
    TC_REDIS_CODEC([zlib], [HAVE_TAGCACHE_ZLIB])
    if test "$PHP_TAGCACHE_LZ4" != "no"; then
      TC_REDIS_CODEC([liblz4], [HAVE_TAGCACHE_LZ4])
    fi
    if test "$PHP_TAGCACHE_ZSTD" != "no"; then
      TC_REDIS_CODEC([libzstd], [HAVE_TAGCACHE_ZSTD])
    fi
    TAGCACHE_SOURCES="$TAGCACHE_SOURCES ext/tc_redis_conn.c ext/tc_redis_sentinel.c ext/tc_redis_cluster.c ext/tc_redis_cmd.c ext/tc_redis_codec.c \
      ext/tc_redis_lua.c ext/tc_redis.c ext/tc_redis_journal.c ext/tc_redis_lease.c"
  fi
  if test "$PHP_TAGCACHE_MEMCACHED" != "no"; then
    dnl libmemcached through pkg-config; =DIR adds DIR's pkgconfig and include dirs.
    AC_PATH_PROG(PKG_CONFIG, pkg-config, no)
    if test "$PHP_TAGCACHE_MEMCACHED" != "yes"; then
      PKG_CONFIG_PATH="$PHP_TAGCACHE_MEMCACHED/lib/pkgconfig:$PHP_TAGCACHE_MEMCACHED/lib64/pkgconfig:$PHP_TAGCACHE_MEMCACHED/share/pkgconfig:$PKG_CONFIG_PATH"
      export PKG_CONFIG_PATH
    fi
    AC_MSG_CHECKING([for libmemcached])
    if test "$PKG_CONFIG" != "no" && $PKG_CONFIG --exists libmemcached; then
      TC_LIBMEMCACHED_CFLAGS=`$PKG_CONFIG --cflags libmemcached`
      TC_LIBMEMCACHED_LIBS=`$PKG_CONFIG --libs libmemcached`
      AC_MSG_RESULT([`$PKG_CONFIG --modversion libmemcached`])
    elif test "$PHP_TAGCACHE_MEMCACHED" != "yes" && test -r "$PHP_TAGCACHE_MEMCACHED/include/libmemcached/memcached.h"; then
      TC_LIBMEMCACHED_CFLAGS="-I$PHP_TAGCACHE_MEMCACHED/include"
      TC_LIBMEMCACHED_LIBS="-L$PHP_TAGCACHE_MEMCACHED/lib -lmemcached"
      AC_MSG_RESULT([in $PHP_TAGCACHE_MEMCACHED])
    else
      AC_MSG_RESULT([no])
      AC_MSG_ERROR([--with-tagcache-memcached: libmemcached not found (Debian: apt-get install libmemcached-dev, or give --with-tagcache-memcached=DIR)])
    fi
    PHP_EVAL_INCLINE($TC_LIBMEMCACHED_CFLAGS)
    PHP_EVAL_LIBLINE($TC_LIBMEMCACHED_LIBS, TAGCACHE_SHARED_LIBADD)
    AC_DEFINE(HAVE_TAGCACHE_MEMCACHED, 1, [tagcache: the memcached backend is built])
    dnl zlib for compress_data, when pkg-config finds it (the Redis check may have done it)
    if test "$PHP_TAGCACHE_REDIS" = "no"; then
      TC_REDIS_CODEC([zlib], [HAVE_TAGCACHE_ZLIB])
    fi
    TAGCACHE_SOURCES="$TAGCACHE_SOURCES ext/tc_memcached_conn.c ext/tc_memcached.c ext/tc_memcached_journal.c ext/tc_memcached_lease.c"
  fi

  PHP_NEW_EXTENSION(tagcache, $TAGCACHE_SOURCES, $ext_shared,, -D_GNU_SOURCE)
  PHP_ADD_BUILD_DIR($ext_builddir/ext)
  PHP_SUBST(TAGCACHE_SHARED_LIBADD)
fi
