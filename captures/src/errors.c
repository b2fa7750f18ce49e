/* Memory calls that fail on purpose, each followed by nothing else, so a
 * replay must get every errno right and the layout after each failure. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG 4096UL

int main(void)
{
	char *a = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* bad alignment */
	mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 123);          /* EINVAL offset */
	munmap(a + 1, PG);                                                         /* EINVAL */
	mprotect(a + 1, PG, PROT_READ);                                            /* EINVAL */
	madvise(a + 1, PG, MADV_DONTNEED);                                         /* EINVAL */
	mmap(a + 1, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0); /* EINVAL */
	/* zero and huge lengths */
	mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);              /* EINVAL */
	mmap(NULL, 1UL << 62, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);      /* ENOMEM */
	mmap(NULL, ~0UL, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);           /* ENOMEM */
	munmap(a, 0);                                                              /* EINVAL */
	mprotect(a, 0, PROT_READ);                                                 /* 0 */
	/* no sharing type */
	mmap(NULL, PG, PROT_READ, MAP_ANONYMOUS, -1, 0);                           /* EINVAL */
	/* MAP_FIXED_NOREPLACE over a mapping */
	mmap(a + 2 * PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0); /* EEXIST */
	/* mremap: overlapping target, shrinking into nothing, unmapped source */
	mremap(a, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, a + PG);          /* EINVAL */
	mremap(a, 2 * PG, 0, 0);                                                   /* EINVAL */
	mremap(a, 2 * PG, 4 * PG, 0);                                              /* ENOMEM: no room in place */
	mremap((void *)0x10000000, PG, 2 * PG, MREMAP_MAYMOVE);                    /* EFAULT */
	mremap(a, 2 * PG, 2 * PG, MREMAP_FIXED, a + 16 * PG);                      /* EINVAL: FIXED without MAYMOVE */
	/* mprotect over a hole: the part before the hole changes, then ENOMEM */
	munmap(a + 5 * PG, PG);
	mprotect(a + 3 * PG, 4 * PG, PROT_READ);                                   /* ENOMEM */
	mprotect(a, PG, PROT_READ | 0x100);                                        /* EINVAL: bad bit */
	/* madvise over a hole: advice applied to the mapped parts, then ENOMEM */
	madvise(a + 4 * PG, 3 * PG, MADV_DONTFORK);                                /* ENOMEM */
	madvise(a, PG, 1000);                                                      /* EINVAL: no such advice */
	madvise(a, PG, MADV_WIPEONFORK);                                           /* 0 */
	/* munmap above the task, mprotect of an unmapped range */
	munmap((void *)(1UL << 47), PG);                                           /* EINVAL */
	mprotect((void *)0x10000000, PG, PROT_READ);                               /* ENOMEM */
	/* brk below its start: refused, the break stays */
	void *b = sbrk(0);
	syscall(12, (char *)b - 64 * PG);
	syscall(12, 0);
	/* read-only file mapped shared, then made writable */
	int fd = open("/etc/hostname", O_RDONLY);
	if (fd >= 0) {
		char *f = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, 0);
		mprotect(f, PG, PROT_READ | PROT_WRITE);                           /* EACCES */
		mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);           /* EACCES */
		close(fd);
	}
	/* (No MAP_FIXED below mmap_min_addr: captured as root, CAP_SYS_RAWIO
	 * lets it succeed, while the model follows an unprivileged process.) */
	/* MAP_GROWSDOWN shared anonymous */
	mmap(NULL, PG, PROT_READ, MAP_SHARED | MAP_ANONYMOUS | MAP_GROWSDOWN, -1, 0);    /* EINVAL */
	printf("errors done\n");
	return 0;
}
