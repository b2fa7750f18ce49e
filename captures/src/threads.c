/* Eight threads, each with its own stack (mmap + guard mprotect by glibc),
 * each allocating and freeing: arenas (64 MiB reservations), mprotect growth. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *work(void *arg)
{
	long n = (long)arg;
	for (int i = 0; i < 50; i++) {
		char *p = malloc(1000 + 3000 * (i % 7) + n);
		memset(p, 1, 100);
		free(p);
	}
	char *big = malloc(300000);
	memset(big, 2, 300000);
	free(big);
	return NULL;
}

int main(void)
{
	pthread_t t[8];
	for (long i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	printf("threads done\n");
	return 0;
}
