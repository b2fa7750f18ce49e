/* Buffers that grow and shrink by mremap, moving when they must. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define PG 4096UL

int main(void)
{
	char *b[6];
	size_t n[6];
	for (int i = 0; i < 6; i++) {
		n[i] = PG;
		b[i] = mmap(NULL, n[i], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		b[i][0] = 1;
	}
	for (int r = 0; r < 40; r++) {
		int i = r % 6;
		size_t m = (r % 4 == 3) ? n[i] / 2 : n[i] * 2;
		if (m < PG)
			m = PG;
		if (m > 64 * PG * 1024)
			m = PG;
		char *p = mremap(b[i], n[i], m, MREMAP_MAYMOVE);
		if (p != MAP_FAILED) {
			b[i] = p;
			n[i] = m;
			p[m - 1] = 2;
		}
	}
	/* A fixed move and a DONTUNMAP move. */
	char *dst = mmap(NULL, 8 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mremap(b[0], n[0] < 8 * PG ? n[0] : 8 * PG, n[0] < 8 * PG ? n[0] : 8 * PG,
	       MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	char *src = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src[0] = 3;
	mremap(src, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
	printf("mremap done\n");
	return 0;
}
