/* Up to vm.max_map_count: single pages of alternating protection (so none
 * merge) until mmap fails with ENOMEM; then the calls that need one more
 * VMA fail too (an mprotect split, a munmap hole), and calls that need none
 * still work. */
#include <stdio.h>
#include <sys/mman.h>

#define PG 4096UL

int main(void)
{
	char *last = NULL, *first = NULL;
	long n = 0;
	for (;;) {
		char *p = mmap(NULL, 3 * PG, (n & 1) ? PROT_READ : PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			break;
		if (!first)
			first = p;
		last = p;
		n++;
	}
	mprotect(last + PG, PG, PROT_READ | PROT_WRITE); /* ENOMEM: would split in three */
	munmap(last + PG, PG);                            /* ENOMEM: would punch a hole */
	munmap(last, 3 * PG);                             /* works: one VMA less */
	mprotect(first, PG, PROT_READ | PROT_WRITE);      /* works: a split, now room */
	printf("%ld mappings\n", n);
	return 0;
}
