/* Every kind of madvise advice on parts of mappings: flag advice splits and
 * merges VMAs, page advice drops or populates pages. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define PG 4096UL

int main(void)
{
	int adv[] = {MADV_RANDOM, MADV_SEQUENTIAL, MADV_NORMAL, MADV_WILLNEED, MADV_DONTNEED,
		     MADV_FREE, MADV_DONTFORK, MADV_DOFORK, MADV_HUGEPAGE, MADV_NOHUGEPAGE,
		     MADV_DONTDUMP, MADV_DODUMP, MADV_WIPEONFORK, MADV_KEEPONFORK, MADV_COLD,
		     MADV_PAGEOUT, MADV_POPULATE_READ, MADV_POPULATE_WRITE, MADV_REMOVE};
	int na = sizeof adv / sizeof adv[0];
	char *a = mmap(NULL, 64 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(a, 1, 64 * PG);
	char *s = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	memset(s, 1, 16 * PG);
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < na; i++) {
			madvise(a + ((i * 3 + r) % 60) * PG, (1 + i % 4) * PG, adv[i]);
			madvise(s + (i % 12) * PG, 2 * PG, adv[i]);
		}
	for (int i = 0; i < na; i++)
		madvise(a, 64 * PG, adv[(i + 2) % na]);
	printf("madvise done\n");
	return 0;
}
