/* file_hooks.h: test-only entry points into ext/tc_file_store.c
 * (file_hooks.c). */
#ifndef TC_FILE_HOOKS_H
#define TC_FILE_HOOKS_H

/* Unmaps, closes and frees every store this process opened, as if the
 * process ended: the next open maps the index and the logs afresh. Call
 * it only when no object of the file engine is open. */
void tc_test_file_forget(void);

#endif
