/* Protection keys, MADV_COLLAPSE and guard regions (Linux 6.13+), with
 * their errors: what the replay applies for pkey_alloc, pkey_free,
 * pkey_mprotect and the two newer madvise advice. */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096UL
#define MB2 (2UL << 20)
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#define GUARD_INSTALL 102
#define GUARD_REMOVE 103

static long pkey_alloc_(unsigned f, unsigned r) { return syscall(SYS_pkey_alloc, f, r); }
static long pkey_free_(int k) { return syscall(SYS_pkey_free, k); }
static long pkey_mprotect_(void *a, size_t l, int p, int k) { return syscall(SYS_pkey_mprotect, a, l, p, k); }

int main(void)
{
	char *a = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	a[0] = 1;
	pkey_alloc_(1, 0);                                  /* EINVAL: flags */
	pkey_alloc_(0, 4);                                  /* EINVAL: rights */
	pkey_mprotect_(a, PG, PROT_READ | PROT_WRITE, 5);   /* EINVAL: not allocated */
	int k = pkey_alloc_(0, 0);                          /* 1 */
	pkey_mprotect_(a + PG, PG, PROT_READ | PROT_WRITE, k); /* a VMA of its own */
	mprotect(a + PG, 2 * PG, PROT_READ);                /* two VMAs: keys k and 0 */
	pkey_free_(k);
	pkey_free_(k);                                      /* EINVAL */
	char *x = mmap(NULL, PG, PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); /* execute-only key */
	mprotect(x, PG, PROT_READ | PROT_EXEC);
	for (int i = 0; i < 16; i++)
		pkey_alloc_(0, 0);                          /* up to ENOSPC */
	/* MADV_COLLAPSE */
	char *c = mmap(NULL, 3 * MB2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *ca = (char *)(((unsigned long)c + MB2 - 1) & ~(MB2 - 1));
	madvise(ca, MB2, MADV_COLLAPSE);                    /* EINVAL: no anon_vma */
	ca[5 * PG] = 1;
	madvise(ca, MB2, MADV_COLLAPSE);                    /* 0 */
	madvise(ca + PG, PG, MADV_COLLAPSE);                /* EINVAL: no block */
	char *s = mmap(NULL, 2 * MB2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	s[MB2] = 1;
	madvise((char *)(((unsigned long)s + MB2 - 1) & ~(MB2 - 1)), MB2, MADV_COLLAPSE); /* EINVAL: nohugepage */
	/* guard regions: no split, kept by DONTNEED, moved by mremap */
	char *g = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	g[PG] = 1;
	madvise(g + PG, PG, GUARD_INSTALL);
	madvise(g, 8 * PG, MADV_DONTNEED);
	madvise(g, 8 * PG, MADV_POPULATE_READ);             /* EFAULT */
	char *m = mremap(g, 8 * PG, 16 * PG, MREMAP_MAYMOVE);
	madvise(m, 8 * PG, GUARD_REMOVE);
	char *l = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED, -1, 0);
	madvise(l, PG, GUARD_INSTALL);                      /* EINVAL: locked */
	munmap(m + 2 * PG, PG);
	madvise(m, 4 * PG, GUARD_INSTALL);                  /* ENOMEM: a hole */
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	waitpid(p, 0, 0);
	return 0;
}
