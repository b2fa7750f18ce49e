/*
 * kernel_peer: the translation unit that compiles the kernel's own
 * lib/maple_tree.c in user space.  This file is our own; the kernel source
 * it includes is fetched by build.sh from Debian's linux-source package and
 * is never part of this repository.
 *
 * Compiled with the kernel's code-generation flags (see build.sh), separately
 * from driver.c, so that the tree code is built as the kernel builds it while
 * the driver may use floating point for its timing.  Not CONFIG_DEBUG_MAPLE_TREE:
 * no validation, no test counters.
 */
#include <stdlib.h>
#include <linux/types.h>
#include <linux/bug.h>
#include <linux/kernel.h>
#include <linux/bitops.h>
#include <linux/gfp.h>
#include <linux/rcupdate.h>
#include <linux/init.h>

#include "lib/maple_tree.c"

/* Exported for the driver, which does not see the kernel's internal headers. */
void kpeer_maple_tree_init(void)
{
	maple_tree_init();
}
