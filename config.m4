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

if test "$PHP_TAGCACHE" != "no"; then
  AC_CHECK_FUNCS([posix_fallocate])
  AC_CHECK_LIB([pthread], [pthread_mutexattr_setrobust], [
    PHP_ADD_LIBRARY(pthread, 1, TAGCACHE_SHARED_LIBADD)
  ], [
    AC_MSG_ERROR([tagcache needs robust process-shared mutexes (pthread_mutexattr_setrobust)])
  ])

  TAGCACHE_SOURCES="ext/tagcache.c ext/tc_class.c ext/tc_options.c ext/tc_hash.c \
    ext/tc_shm_seg.c ext/tc_shm_alloc.c ext/tc_shm.c ext/tc_shm_recover.c ext/tc_util.c \
    ext/tc_file.c ext/tc_file_log.c ext/tc_file_index.c ext/tc_file_store.c \
    ext/tc_file_rebuild.c ext/tc_file_compact.c"

  if test "$PHP_TAGCACHE_REDIS" != "no"; then
    AC_MSG_ERROR([--with-tagcache-redis: the Redis engine has not landed yet])
  fi
  if test "$PHP_TAGCACHE_MEMCACHED" != "no"; then
    AC_MSG_ERROR([--with-tagcache-memcached: the memcached engine has not landed yet])
  fi

  PHP_NEW_EXTENSION(tagcache, $TAGCACHE_SOURCES, $ext_shared,, -D_GNU_SOURCE)
  PHP_ADD_BUILD_DIR($ext_builddir/ext)
  PHP_SUBST(TAGCACHE_SHARED_LIBADD)
fi
