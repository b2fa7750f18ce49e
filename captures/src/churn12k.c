/* 12,000 memory calls: mmaps of varied sizes, mprotect splits and unmaps,
 * for the replay's speed figure. */
#include <stdio.h>
#include <sys/mman.h>

#define PG 4096UL

int main(void)
{
	char *live[64] = {0};
	size_t len[64];
	for (int i = 0; i < 4000; i++) {
		int k = (i * 7) % 64;
		if (live[k]) {
			munmap(live[k], len[k]);
			live[k] = 0;
		}
		len[k] = (1 + (i % 9)) * PG;
		live[k] = mmap(NULL, len[k], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		live[k][0] = 1;
		mprotect(live[k], PG, (i & 1) ? PROT_READ : PROT_READ | PROT_WRITE);
	}
	printf("churn done\n");
	return 0;
}
