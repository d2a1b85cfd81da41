/*
 * tc_file_stale.c: the File engine's stampede hooks (issue 14): where its
 * stampede options sit in the config, and its per-machine lease table
 * (tc_lease.c), a file beside the logs: <cache_dir>/<prefix>.lease, with
 * the store's file mode. The store's own files are found by name (logs,
 * index), so this one is never taken for one of them.
 */
#include <stdio.h>
#include "tc_file_defs.h"
#include "tc_lease.h"

const tc_stale_opts *tc_file_stale_opts(const void *config)
{
	return &((const tc_file_config *)config)->stale;
}

int tc_file_lease_home(void *st, char *path, size_t n, int *mode)
{
	const tc_file *f = st;

	if ((size_t)snprintf(path, n, "%s/%s.lease", f->s->dir, f->s->prefix) >= n) {
		return TC_ERR;
	}
	*mode = f->file_mode & 0666;
	return TC_OK;
}
