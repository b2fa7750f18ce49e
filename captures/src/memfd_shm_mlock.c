/* Captured as captures/memfd_shm_mlock (built by captures/make.sh): a memfd
 * mapped shared and mremapped, System V shared memory, mlock / mlockall,
 * MAP_POPULATE, MAP_GROWSDOWN, madvise flag advice, MREMAP_FIXED, a file
 * mapping with holes, fork, vfork + exec, malloc/realloc of large blocks. */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#define PG 4096UL
int main(void){
  /* brk grow and shrink */
  char *b0 = sbrk(0); sbrk(10*PG); memset(b0, 1, 10*PG); sbrk(-(long)(6*PG)); sbrk(3*PG);
  /* memfd shared, mremap grow in place and moving */
  int fd = memfd_create("blob", 0); ftruncate(fd, 64*PG);
  char *s = mmap(NULL, 16*PG, PROT_READ|PROT_WRITE, MAP_SHARED, fd, 0); s[0]=1;
  char *s2 = mremap(s, 16*PG, 32*PG, MREMAP_MAYMOVE); s2[20*PG]=2;
  char *ro = mmap(NULL, 8*PG, PROT_READ, MAP_SHARED, fd, 4*PG);
  mprotect(ro, 8*PG, PROT_READ|PROT_WRITE);
  /* shared anonymous, fork, child writes */
  char *sa = mmap(NULL, 8*PG, PROT_READ|PROT_WRITE, MAP_SHARED|MAP_ANONYMOUS, -1, 0);
  /* MAP_POPULATE, mlock, MAP_LOCKED */
  char *pp = mmap(NULL, 16*PG, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_POPULATE, -1, 0);
  mlock(pp+4*PG, 4*PG); munlock(pp+4*PG, 2*PG);
  mlockall(MCL_CURRENT); munlockall();
  /* MAP_GROWSDOWN */
  char *gd = mmap(NULL, 4*PG, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_GROWSDOWN, -1, 0);
  gd[3*PG]=1;
  /* sysv shm */
  int id = shmget(IPC_PRIVATE, 10*PG, IPC_CREAT|0600);
  char *sh = shmat(id, NULL, 0); sh[0]=1;
  char *sh2 = shmat(id, NULL, SHM_RDONLY);
  shmdt(sh2);
  shmctl(id, IPC_RMID, 0);
  /* anon private: mprotect pieces, merge back */
  char *a = mmap(NULL, 32*PG, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
  a[0]=1;
  mprotect(a+8*PG, 8*PG, PROT_READ); mprotect(a+8*PG, 8*PG, PROT_READ|PROT_WRITE);
  madvise(a, 32*PG, MADV_DONTFORK); madvise(a+4*PG, 4*PG, MADV_DOFORK);
  madvise(a, 8*PG, MADV_WIPEONFORK); madvise(a, 8*PG, MADV_KEEPONFORK);
  madvise(a+16*PG, 8*PG, MADV_HUGEPAGE); madvise(a+16*PG, 8*PG, MADV_NOHUGEPAGE);
  madvise(a, 32*PG, MADV_SEQUENTIAL); madvise(a, 32*PG, MADV_NORMAL);
  madvise(a, 32*PG, MADV_RANDOM); madvise(a, 32*PG, MADV_NORMAL);
  madvise(a, 32*PG, MADV_MERGEABLE); madvise(a, 32*PG, MADV_UNMERGEABLE);
  /* MREMAP_FIXED over existing, shrink */
  char *t = mmap(NULL, 16*PG, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0); t[0]=5;
  mremap(a+24*PG, 8*PG, 8*PG, MREMAP_MAYMOVE|MREMAP_FIXED, t+4*PG);
  mremap(t, 16*PG, 2*PG, 0);
  /* file private mapping of a library-like file with offsets */
  int f = open("/usr/bin/ls", O_RDONLY);
  char *fm = mmap(NULL, 64*PG, PROT_READ, MAP_PRIVATE, f, 0);
  mprotect(fm+8*PG, 8*PG, PROT_READ|PROT_WRITE); fm[8*PG]=1;
  munmap(fm+16*PG, 8*PG);
  char *fm2 = mmap(fm+16*PG, 8*PG, PROT_READ, MAP_PRIVATE|MAP_FIXED, f, 16*PG);
  (void)fm2;
  pid_t p = fork();
  if (p == 0) { sa[0]=1; char *c = mmap(NULL, 8*PG, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0); c[0]=1;
    char *bb = malloc(300000); bb[0]=1; _exit(0); }
  waitpid(p, 0, 0);
  /* vfork + exec */
  if (vfork() == 0) { execl("/bin/true", "true", NULL); _exit(1); }
  wait(0);
  /* big allocations through malloc: mmap threshold, realloc -> mremap */
  char *m = malloc(1<<20); m[0]=1; m = realloc(m, 4<<20); m[3<<20]=1; m = realloc(m, 8<<20); free(m);
  printf("%d\n", s2[20*PG] + sa[0]);
  return 0;
}
