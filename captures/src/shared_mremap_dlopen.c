/* Captured as captures/shared_mremap_dlopen (built by captures/make.sh): a file
 * mapped MAP_SHARED, grown by mremap (moving) and shrunk, a private file
 * mapping written, mprotected and moved, dlopen of libm and libz, an
 * anonymous block zapped by MADV_DONTNEED and grown by mremap. */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <dlfcn.h>
int main(void){
  int fd=open("/tmp/mmx/work/data.bin",O_RDWR|O_CREAT|O_TRUNC,0644);
  ftruncate(fd, 1<<20);
  char*p=mmap(NULL,1<<16,PROT_READ|PROT_WRITE,MAP_SHARED,fd,0);
  memset(p,1,1<<16);
  char*q=mremap(p,1<<16,1<<20,MREMAP_MAYMOVE);
  memset(q,2,1<<20);
  msync(q,1<<20,MS_SYNC);
  char*r=mremap(q,1<<20,1<<18,0);
  munmap(r,1<<18);
  char*a=mmap(NULL,1<<22,PROT_READ|PROT_WRITE,MAP_PRIVATE,fd,0);
  a[0]=1; a[1<<19]=2;
  mprotect(a+4096,8192,PROT_READ);
  char*b=mremap(a,1<<22,1<<23,MREMAP_MAYMOVE);
  munmap(b+(1<<21),4096);
  void*h=dlopen("libm.so.6",RTLD_NOW);
  if(h){ double (*c)(double)=dlsym(h,"cos"); printf("%f\n",c(0)); dlclose(h);}
  void*z=dlopen("libz.so.1",RTLD_NOW); if(z) dlclose(z);
  char*big=mmap(NULL,4<<20,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
  big[0]=1; big[(2<<20)+5]=1;
  madvise(big,4<<20,MADV_DONTNEED);
  char*mm=mremap(big,4<<20,6<<20,MREMAP_MAYMOVE);
  mm[5<<20]=3;
  close(fd); unlink("/tmp/mmx/work/data.bin");
  return 0;
}
