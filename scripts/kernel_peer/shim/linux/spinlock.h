/* kernel_peer shim (our own code): locks stubbed out (single thread).
 * Shadows tools/include/linux/spinlock.h (pthread mutexes). */
#ifndef KPEER_SPINLOCK_H
#define KPEER_SPINLOCK_H

#include <stdbool.h>

typedef struct { int unused; } spinlock_t;
#define DEFINE_SPINLOCK(x)		spinlock_t x = { 0 }
#define __SPIN_LOCK_UNLOCKED(x)		(spinlock_t){ 0 }
#define spin_lock_init(x)		((void)(x))
#define spin_lock(x)			((void)(x))
#define spin_lock_nested(x, s)		((void)(x))
#define spin_unlock(x)			((void)(x))
#define spin_lock_bh(x)			((void)(x))
#define spin_unlock_bh(x)		((void)(x))
#define spin_lock_irq(x)		((void)(x))
#define spin_unlock_irq(x)		((void)(x))
#define spin_lock_irqsave(x, f)		((void)(f), (void)(x))
#define spin_unlock_irqrestore(x, f)	((void)(f), (void)(x))

typedef spinlock_t arch_spinlock_t;
#define __ARCH_SPIN_LOCK_UNLOCKED	{ 0 }
static inline void arch_spin_lock(arch_spinlock_t *l) { (void)l; }
static inline void arch_spin_unlock(arch_spinlock_t *l) { (void)l; }
static inline bool arch_spin_is_locked(arch_spinlock_t *l) { (void)l; return true; }

#endif
