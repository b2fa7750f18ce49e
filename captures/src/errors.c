/* Memory calls that fail on purpose. After each one a child is forked that
 * exits at once: its exit snapshot is the layout right after the failure
 * (fork copies every VMA but VM_DONTCOPY ones), so a replay must get every
 * errno right and the layout after every failing call. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG 4096UL

/* A child that exits at once: a snapshot of the layout now. */
static void snap(void)
{
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
}

int main(void)
{
	char *a = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* bad alignment */
	mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 123);          /* EINVAL offset */
	snap();
	munmap(a + 1, PG);                                                         /* EINVAL */
	snap();
	mprotect(a + 1, PG, PROT_READ);                                            /* EINVAL */
	snap();
	madvise(a + 1, PG, MADV_DONTNEED);                                         /* EINVAL */
	snap();
	mmap(a + 1, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0); /* EINVAL */
	snap();
	/* zero and huge lengths */
	mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);              /* EINVAL */
	snap();
	mmap(NULL, 1UL << 62, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);      /* ENOMEM */
	snap();
	mmap(NULL, ~0UL, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);           /* ENOMEM */
	snap();
	munmap(a, 0);                                                              /* EINVAL */
	snap();
	mprotect(a, 0, PROT_READ);                                                 /* 0 */
	/* no sharing type */
	mmap(NULL, PG, PROT_READ, MAP_ANONYMOUS, -1, 0);                           /* EINVAL */
	snap();
	/* MAP_FIXED_NOREPLACE over a mapping */
	mmap(a + 2 * PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0); /* EEXIST */
	snap();
	/* mremap: overlapping target, shrinking into nothing, unmapped source */
	mremap(a, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED, a + PG);          /* EINVAL */
	snap();
	mremap(a, 2 * PG, 0, 0);                                                   /* EINVAL */
	snap();
	mremap(a, 2 * PG, 4 * PG, 0);                                              /* ENOMEM: no room in place */
	snap();
	mremap((void *)0x10000000, PG, 2 * PG, MREMAP_MAYMOVE);                    /* EFAULT */
	snap();
	mremap(a, 2 * PG, 2 * PG, MREMAP_FIXED, a + 16 * PG);                      /* EINVAL: FIXED without MAYMOVE */
	snap();
	/* mprotect over a hole: the part before the hole changes, then ENOMEM */
	munmap(a + 5 * PG, PG);
	mprotect(a + 3 * PG, 4 * PG, PROT_READ);                                   /* ENOMEM */
	snap();
	mprotect(a, PG, PROT_READ | 0x100);                                        /* EINVAL: bad bit */
	snap();
	/* madvise over a hole: advice applied to the mapped parts, then ENOMEM */
	madvise(a + 4 * PG, 3 * PG, MADV_DONTFORK);                                /* ENOMEM */
	snap();
	madvise(a, PG, 1000);                                                      /* EINVAL: no such advice */
	snap();
	madvise(a, PG, MADV_WIPEONFORK);                                           /* 0 */
	/* munmap above the task, mprotect of an unmapped range */
	munmap((void *)(1UL << 47), PG);                                           /* EINVAL */
	snap();
	mprotect((void *)0x10000000, PG, PROT_READ);                               /* ENOMEM */
	snap();
	/* brk below its start: refused, the break stays */
	void *b = sbrk(0);
	syscall(12, (char *)b - 64 * PG);
	syscall(12, 0);
	snap();
	/* read-only file mapped shared, then made writable */
	int fd = open("/etc/hostname", O_RDONLY);
	if (fd >= 0) {
		char *f = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, 0);
		mprotect(f, PG, PROT_READ | PROT_WRITE);                           /* EACCES */
		snap();
		mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);           /* EACCES */
		snap();
		close(fd);
	}
	/* (No MAP_FIXED below mmap_min_addr: captured as root, CAP_SYS_RAWIO
	 * lets it succeed, while the model follows an unprivileged process.) */
	/* MAP_GROWSDOWN shared anonymous */
	mmap(NULL, PG, PROT_READ, MAP_SHARED | MAP_ANONYMOUS | MAP_GROWSDOWN, -1, 0);    /* EINVAL */
	snap();
	printf("errors done\n");
	return 0;
}
