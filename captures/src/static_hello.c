/* A static binary: no dynamic loader; glibc's static start-up and malloc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(void)
{
	char *p = malloc(500000);
	memset(p, 1, 500000);
	char *q = mmap(NULL, 3 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	q[0] = 1;
	free(p);
	printf("static done\n");
	return 0;
}
