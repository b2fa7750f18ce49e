/* Captured as captures/shm_mlock (built by captures/make.sh) WITHOUT
 * --state-calls, so the trace has no shmget: the replay must take each
 * segment's size from a later snapshot. System V shared memory attached
 * without and with an address (SHM_RDONLY, SHM_RND, SHM_REMAP), split by
 * mprotect and detached whole, failing shmat/shmdt; mlock, mlock2
 * (MLOCK_ONFAULT), munlock, mlock over a hole, mlockall(MCL_FUTURE) and the
 * mappings, heap growth and attachments it locks. After each step a child
 * is forked that exits at once: its exit snapshot is the layout then (a
 * child inherits no lock, but every split). */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096UL

static void snap(void)
{
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
}

int main(void)
{
	int big = shmget(IPC_PRIVATE, 10 * PG + 100, IPC_CREAT | 0600);
	int small = shmget(0x5eed, 4 * PG, IPC_CREAT | 0600);
	/* without an address, read-write and read-only: two attachments */
	char *a = shmat(big, NULL, 0);
	a[0] = 1;
	char *r = shmat(big, NULL, SHM_RDONLY);
	snap();
	/* at an address, and with SHM_RND | SHM_REMAP over anonymous memory */
	char *anon = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	anon[0] = 1;
	char *fixed = shmat(small, anon - 32 * PG, 0);
	char *over = shmat(small, anon + 4 * PG + 123, SHM_RND | SHM_REMAP);
	snap();
	/* failing: unaligned without SHM_RND, SHM_REMAP without an address,
	 * over a mapping without SHM_REMAP */
	shmat(small, anon + 123, 0);
	shmat(small, NULL, SHM_REMAP);
	shmat(small, anon, 0);
	/* the read-write attachment split in three, then detached whole */
	mprotect(a + 2 * PG, PG, PROT_READ);
	snap();
	shmdt(a);
	shmdt(a);              /* EINVAL: nothing left */
	shmdt(r + 1);          /* EINVAL: unaligned */
	snap();
	shmdt(fixed);
	/* mlock, mlock2(MLOCK_ONFAULT), munlock of a part */
	char *m = mmap(NULL, 16 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mlock(m + 2 * PG + 5, 3 * PG);
	mlock2(m + 8 * PG, 4 * PG, MLOCK_ONFAULT);
	mlock2(m, PG, 2);      /* EINVAL */
	snap();
	munlock(m + 3 * PG, PG);
	snap();
	/* over a hole: locks up to it, then ENOMEM */
	char *h = mmap(NULL, 8 * PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(h + 4 * PG, 2 * PG);
	mlock(h, 8 * PG);
	mlockall(MCL_ONFAULT); /* EINVAL */
	snap();
	/* MCL_FUTURE: later mappings, heap growth and attachments are locked */
	mlockall(MCL_FUTURE);
	char *f = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *none = mmap(NULL, 2 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	sbrk(3 * PG);
	char *s2 = shmat(small, NULL, 0);
	mlockall(MCL_FUTURE | MCL_ONFAULT);
	char *g = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	snap();
	shmctl(big, IPC_RMID, NULL);
	shmctl(small, IPC_RMID, NULL);
	(void)none;
	return f[0] + s2[0] + g[0] + over[0];
}
