/* seg_hooks.h: test-only access to ext/tc_shm_seg.c (see seg_hooks.c). */
#ifndef TC_SEG_HOOKS_H
#define TC_SEG_HOOKS_H

#include <stdint.h>
#include "../../ext/tc_shm.h"

/* Unmaps and forgets every segment this process mapped: no object opened
 * before may be used afterwards. */
void tc_test_forget_maps(void);
/* The header check that decides between "use it" and "recreate it":
 * 0 when the header is accepted (then *nslots is set). */
int tc_test_check_header(const tc_shm_hdr *h, uint64_t fsize, uint32_t *nslots);

#endif
