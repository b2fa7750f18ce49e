/*
 * kernel_peer: our own kmem_cache stand-in for the kernel's maple node cache
 * (the only cache lib/maple_tree.c creates).  Compiled with the same
 * kernel code-generation flags as the tree (see build.sh) and kept in its own
 * translation unit, so that, as in the kernel, every node allocation is an
 * out-of-line call into the allocator.
 *
 * Objects are carved from 2 MiB chunks (aligned to 2 MiB, plain 4 KiB pages:
 * no madvise) by a bump pointer; freed objects go on a LIFO free list that
 * allocation serves first.  kpeer_cache_reset() forgets every object and
 * restarts carving at the first chunk (the chunks stay mapped, so a repetition
 * after a reset pays no page faults): "fresh" in the terms of the kernel
 * reference numbers of BENCHMARKS.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>
#include <linux/gfp.h>
#include <linux/slab.h>
#include <linux/compiler.h>
#include <linux/rcupdate.h>

#define KPEER_CHUNK	(2UL << 20)

struct kpeer_free {
	struct kpeer_free *next;
};

struct kmem_cache {
	const char *name;
	unsigned int size;		/* object size, rounded up to align */
	unsigned int align;
	void (*ctor)(void *);
	struct kpeer_free *free;	/* LIFO free list */
	char **chunks;			/* every chunk ever mapped, in order */
	size_t nr_chunks, cap_chunks;
	size_t cur;			/* chunk being carved */
	char *bump, *end;		/* its unused tail */
	long live;			/* objects handed out and not freed */
};

/* The one cache the tree creates; the driver reads and resets it. */
static struct kmem_cache *kpeer_node_cache;

static __attribute__((force_align_arg_pointer, noreturn)) void kpeer_die(const char *what)
{
	fprintf(stderr, "kernel_peer: %s\n", what);
	abort();
}

struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
				     unsigned int align, unsigned int flags,
				     void (*ctor)(void *))
{
	struct kmem_cache *c = calloc(1, sizeof(*c));

	(void)flags;
	if (!c)
		kpeer_die("out of memory (kmem_cache_create)");
	if (!align)
		align = sizeof(void *);
	c->name = name;
	c->align = align;
	c->size = (size + align - 1) / align * align;
	c->ctor = ctor;
	if (KPEER_CHUNK % c->size)
		kpeer_die("object size does not divide the chunk");
	kpeer_node_cache = c;
	return c;
}

/* Calls into glibc (malloc), which expects the 16-byte stack alignment that
 * -mpreferred-stack-boundary=3 does not keep: realign on entry. */
static noinline __attribute__((force_align_arg_pointer))
void *kpeer_next_chunk(struct kmem_cache *c)
{
	char *chunk;

	if (c->nr_chunks && c->cur + 1 < c->nr_chunks) {
		chunk = c->chunks[++c->cur];
	} else {
		if (c->nr_chunks == c->cap_chunks) {
			c->cap_chunks = c->cap_chunks ? 2 * c->cap_chunks : 64;
			c->chunks = realloc(c->chunks,
					    c->cap_chunks * sizeof(*c->chunks));
			if (!c->chunks)
				kpeer_die("out of memory (chunk list)");
		}
		chunk = aligned_alloc(KPEER_CHUNK, KPEER_CHUNK);
		if (!chunk)
			kpeer_die("out of memory (2 MiB chunk)");
		c->cur = c->nr_chunks;
		c->chunks[c->nr_chunks++] = chunk;
	}
	c->bump = chunk;
	c->end = chunk + KPEER_CHUNK;
	return chunk;
}

static inline void *kpeer_alloc(struct kmem_cache *c, gfp_t gfp)
{
	void *p;

	if (c->free) {
		p = c->free;
		c->free = c->free->next;
	} else {
		if (c->bump == c->end)
			kpeer_next_chunk(c);
		p = c->bump;
		c->bump += c->size;
	}
	c->live++;
	if (c->ctor)
		c->ctor(p);
	else if (gfp & __GFP_ZERO)
		memset(p, 0, c->size);
	return p;
}

static inline void kpeer_free(struct kmem_cache *c, void *p)
{
	struct kpeer_free *f = p;

	f->next = c->free;
	c->free = f;
	c->live--;
}

void *kmem_cache_alloc_lru(struct kmem_cache *c, struct list_lru *lru, int gfp)
{
	(void)lru;
	return kpeer_alloc(c, gfp);
}

void kmem_cache_free(struct kmem_cache *c, void *p)
{
	kpeer_free(c, p);
}

int kmem_cache_alloc_bulk(struct kmem_cache *c, gfp_t gfp, size_t size,
			  void **list)
{
	for (size_t i = 0; i < size; i++)
		list[i] = kpeer_alloc(c, gfp);
	return size;
}

void kmem_cache_free_bulk(struct kmem_cache *c, size_t size, void **list)
{
	for (size_t i = 0; i < size; i++)
		kpeer_free(c, list[i]);
}

void kmem_cache_shrink(struct kmem_cache *c)
{
	(void)c;
}

/* Deferred frees run at once: one thread, and the driver never puts a tree
 * in RCU mode, so no reader can hold the node. */
void kpeer_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *))
{
	func(head);
}

/* --- for the driver --- */

void kpeer_cache_reset(void)
{
	struct kmem_cache *c = kpeer_node_cache;

	c->free = NULL;
	c->live = 0;
	if (c->nr_chunks) {
		c->cur = 0;
		c->bump = c->chunks[0];
		c->end = c->bump + KPEER_CHUNK;
	} else {
		c->bump = c->end = NULL;
	}
}

long kpeer_cache_live(void)
{
	return kpeer_node_cache->live;
}

unsigned int kpeer_cache_object_size(void)
{
	return kpeer_node_cache->size;
}

size_t kpeer_cache_chunks(void)
{
	return kpeer_node_cache->nr_chunks;
}
