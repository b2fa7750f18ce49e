/* MAP_32BIT placements (bottom-up from 1 GiB, below 2 GiB), with hints
 * inside and outside that window and a 2 MiB-multiple mapping, and
 * MAP_SHARED_VALIDATE refused for anonymous memory (EINVAL). */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>

#define PG 4096UL
#define ANON (MAP_PRIVATE | MAP_ANONYMOUS)
#define RW (PROT_READ | PROT_WRITE)

static char *map(unsigned long hint, unsigned long len, int flags)
{
	char *p = mmap((void *)hint, len, RW, flags, -1, 0);
	if (p != MAP_FAILED)
		p[0] = 1;
	return p;
}

int main(void)
{
	char *a = map(0, 3 * PG, ANON | MAP_32BIT);
	map(0, 5 * PG, ANON | MAP_32BIT);
	map(0, 64UL << 20, ANON | MAP_32BIT);
	map(0x50000000, PG, ANON | MAP_32BIT);	/* free hint in the window */
	map(0x90000000, PG, ANON | MAP_32BIT);	/* hint above 2 GiB: not used */
	map(0x50000000, PG, ANON | MAP_32BIT);	/* occupied hint */
	map(0, 0x38000000, ANON | MAP_32BIT);	/* does not fit: ENOMEM */
	munmap(a + PG, PG);
	map(0, PG, ANON | MAP_32BIT);		/* the hole */
	map(0xa0000000, 2 * PG, ANON | MAP_32BIT | MAP_FIXED);
	map(0, 2 * PG, ANON);			/* top-down as usual */
	map(0, 4 * PG, MAP_SHARED_VALIDATE | MAP_ANONYMOUS);	/* EINVAL */
	map(0, 4 * PG, MAP_SHARED | MAP_ANONYMOUS | MAP_32BIT);
	printf("done\n");
	return 0;
}
