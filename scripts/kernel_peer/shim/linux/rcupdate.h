/* kernel_peer shim (our own code): RCU stubbed out for a single-threaded
 * benchmark of a tree that is never in RCU mode.  Shadows the user-space test
 * harness's linux/rcupdate.h (which pulls in liburcu). */
#ifndef KPEER_RCUPDATE_H
#define KPEER_RCUPDATE_H

#include <linux/compiler.h>

struct rcu_head {
	struct rcu_head *next;
	void (*func)(struct rcu_head *head);
};

#define rcu_read_lock()			do { } while (0)
#define rcu_read_unlock()		do { } while (0)
#define rcu_dereference(p)		READ_ONCE(p)
#define rcu_dereference_raw(p)		READ_ONCE(p)
#define rcu_dereference_protected(p, c)	READ_ONCE(p)
#define rcu_dereference_check(p, c)	READ_ONCE(p)
/* x86: a release store is a compiler barrier plus a plain store. */
#define rcu_assign_pointer(p, v)	do { barrier(); WRITE_ONCE((p), (v)); } while (0)
#define RCU_INIT_POINTER(p, v)		do { (p) = (v); } while (0)

/* Single thread, no readers: a deferred free can run at once.  The tree is
 * never put in RCU mode by the driver, so this is not reached in practice. */
void kpeer_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *));
#define call_rcu(h, f)			kpeer_call_rcu((h), (f))

#endif
