/* fork without exec: the children map, protect and unmap memory of their
 * own while the parent does too; one child forks a grandchild. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096UL

static void churn(int seed)
{
	char *m[16];
	for (int i = 0; i < 16; i++) {
		m[i] = mmap(NULL, (1 + (i + seed) % 5) * PG, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		m[i][0] = (char)i;
	}
	for (int i = 0; i < 16; i += 3)
		mprotect(m[i], PG, PROT_READ);
	for (int i = 0; i < 16; i += 2)
		munmap(m[i], PG);
	char *p = malloc(200000);
	memset(p, 0, 200000);
	free(p);
}

int main(void)
{
	char *shared = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	shared[0] = 1;
	churn(0);
	for (int k = 0; k < 3; k++) {
		pid_t c = fork();
		if (c == 0) {
			churn(k + 1);
			if (k == 1 && fork() == 0) {
				churn(7);
				_exit(0);
			}
			wait(NULL);
			_exit(0);
		}
	}
	churn(9);
	while (wait(NULL) > 0)
		;
	printf("forker done\n");
	return 0;
}
