/*
 * guard_mmap.c: linked with -Wl,--wrap=mmap,--wrap=munmap, so that every
 * file mapping the engine makes sits between two PROT_NONE pages.
 *
 * AddressSanitizer knows nothing about the inside of a MAP_SHARED mapping:
 * a read past the end of the segment would land silently in whatever the
 * kernel mapped next to it. With a guard page on each side it is a SEGV
 * that the sanitizer reports with a stack.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __real_munmap(void *addr, size_t len);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __wrap_munmap(void *addr, size_t len);

#define NGUARDED 64

static struct {
	char *start;  /* the reservation, guard page included */
	size_t span;
} guarded[NGUARDED];

static size_t page(void)
{
	static size_t pg;

	if (!pg) {
		pg = (size_t)sysconf(_SC_PAGESIZE);
	}
	return pg;
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	size_t pg = page(), span, i;
	char *res;
	void *p;

	if (addr || fd < 0 || len == 0) {
		return __real_mmap(addr, len, prot, flags, fd, off);
	}
	for (i = 0; i < NGUARDED && guarded[i].start; i++) {
	}
	if (i == NGUARDED) {
		return __real_mmap(addr, len, prot, flags, fd, off);
	}
	span = (len + pg - 1) / pg * pg + 2 * pg;
	res = __real_mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED) {
		return MAP_FAILED;
	}
	p = __real_mmap(res + pg, len, prot, flags | MAP_FIXED, fd, off);
	if (p == MAP_FAILED) {
		int e = errno;

		__real_munmap(res, span);
		errno = e;
		return MAP_FAILED;
	}
	guarded[i].start = res;
	guarded[i].span = span;
	return p;
}

int __wrap_munmap(void *addr, size_t len)
{
	size_t i;

	for (i = 0; i < NGUARDED; i++) {
		if (guarded[i].start && guarded[i].start + page() == (char *)addr) {
			int r = __real_munmap(guarded[i].start, guarded[i].span);

			guarded[i].start = NULL;
			return r;
		}
	}
	return __real_munmap(addr, len);
}
