/*
 * file_hooks.c: ext/tc_file_store.c compiled as is, plus a test-only entry
 * point to its static list of stores. The file tests link this file instead
 * of ext/tc_file_store.c.
 *
 * A process keeps each store (directory and prefix) it opened for its
 * lifetime: the index mapping, its mappings of the logs, the active log's
 * descriptor. A fuzzer runs thousands of inputs in one process, each in a
 * directory whose files it rewrites, so after each it forgets every store,
 * and the next open starts as a new PHP process would.
 */
#include "../../ext/tc_file_store.c"

#include "file_hooks.h"

void tc_test_file_forget(void)
{
	while (stores) {
		tcf_store *s = stores;
		int i;

		stores = s->next;
		if (s->held && s->ix.hdr) {
			pthread_mutex_unlock(&s->ix.hdr->lock);
		}
		if (s->ix.base) {
			munmap(s->ix.base, s->ix.size);
		}
		for (i = 0; i < TCF_MAXLOGS; i++) {
			if (s->logs[i].base) {
				munmap(s->logs[i].base, s->logs[i].len);
			}
		}
		if (s->wfd >= 0) {
			close(s->wfd);
		}
		tcf_funlock(s);
		close(s->dirfd);
		free(s->dir);
		free(s);
	}
}
