/*
 * kernel_peer driver: runs the workloads of BENCHMARKS.md against the Linux
 * kernel's own maple tree (lib/maple_tree.c, compiled in user space by
 * build.sh) and prints BENCHMARKS.md's one-line format with impl=kernel.
 *
 * This file is our own code.  It only calls the kernel tree's public API
 * (mtree_*, mas_*, __mt_dup, __mt_destroy) through the kernel's headers; no
 * kernel source is copied here.
 *
 * Each workload's timed part is a separate function named timed_part_<w>,
 * never inlined or cloned, so that
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*timed_part*'
 * counts exactly the timed parts (the convention of maple-cli's timer.rs).
 * The clock is read by the caller, outside those functions.
 *
 * Usage: kernel_peer -w WORKLOAD[,W2..] [--n N] [--q Q] [--reps R] [--aged]
 *                    [--rebuild-plain] [--check]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/types.h>
#include <linux/bug.h>
#include <linux/kernel.h>
#include <linux/gfp.h>
#include <linux/maple_tree.h>
#include <linux/xarray.h>

/* From kernel_tu.c / kcache.c (compiled with the kernel's flags). */
void kpeer_maple_tree_init(void);
void kpeer_cache_reset(void);
long kpeer_cache_live(void);
unsigned int kpeer_cache_object_size(void);

#define TIMED __attribute__((noipa))

typedef uint64_t u64;

/* ---------------------------------------------------------------- rng */

#define SEED 42ULL

static inline u64 sm_next(u64 *s)
{
	u64 z;

	*s += 0x9E3779B97F4A7C15ULL;
	z = *s;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static u64 *perm(u64 n, u64 *s)
{
	u64 *p = malloc((n ? n : 1) * sizeof(*p));

	if (!p) {
		fprintf(stderr, "kernel_peer: out of memory (perm)\n");
		exit(2);
	}
	for (u64 i = 0; i < n; i++)
		p[i] = i;
	for (u64 i = n; i-- > 1;) {
		u64 j = sm_next(s) % (i + 1);
		u64 t = p[i];

		p[i] = p[j];
		p[j] = t;
	}
	return p;
}

/* ------------------------------------------------------------ helpers */

static inline void *val(u64 v)
{
	return xa_mk_value(v);
}

static void must(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "kernel_peer: %s failed: %d\n", what, ret);
		exit(2);
	}
}

static u64 checksum(struct maple_tree *mt)
{
	MA_STATE(mas, mt, 0, 0);
	void *entry;
	u64 sum = 0;

	mas_for_each(&mas, entry, ULONG_MAX)
		sum += mas.index ^ mas.last ^ xa_to_value(entry);
	return sum;
}

static u64 count_ranges(struct maple_tree *mt)
{
	MA_STATE(mas, mt, 0, 0);
	void *entry;
	u64 n = 0;

	mas_for_each(&mas, entry, ULONG_MAX)
		n++;
	return n;
}

static void seq_fill(struct maple_tree *mt, u64 n)
{
	for (u64 i = 0; i < n; i++)
		must(mtree_store_range(mt, 16 * i, 16 * i + 9, val(i + 1),
				       GFP_KERNEL), "store");
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double bytes_per_entry(long nodes, u64 entries)
{
	return entries ? (double)nodes * kpeer_cache_object_size() / entries : 0;
}

static u64 dup_copies(u64 n)
{
	u64 r = n ? 2000000 / n : 1;

	return r ? r : 1;
}

/* One repetition's result. */
struct rep {
	double ns;		/* elapsed ns of the timed part */
	u64 ops;		/* what ns/op divides by */
	u64 checksum;
	double bpe;		/* bytes of nodes per stored range, <0 = n/a */
};

/* ------------------------------------------------------- timed parts */

TIMED void timed_part_seq_store(struct maple_tree *mt, u64 n)
{
	for (u64 i = 0; i < n; i++)
		mtree_store_range(mt, 16 * i, 16 * i + 9, val(i + 1), GFP_KERNEL);
}

TIMED void timed_part_rand_store(struct maple_tree *mt, const u64 *p, u64 n)
{
	for (u64 k = 0; k < n; k++) {
		u64 i = p[k];

		mtree_store_range(mt, 16 * i, 16 * i + 9, val(i + 1), GFP_KERNEL);
	}
}

TIMED u64 timed_part_load(struct maple_tree *mt, u64 *rng, u64 n, u64 q)
{
	u64 s = *rng, span = 16 * n, sum = 0;

	for (u64 k = 0; k < q; k++) {
		void *e = mtree_load(mt, sm_next(&s) % span);

		if (e)
			sum += xa_to_value(e);
	}
	*rng = s;
	return sum;
}

TIMED u64 timed_part_iter(struct maple_tree *mt)
{
	u64 last = 0;

	for (int pass = 0; pass < 10; pass++) {
		MA_STATE(mas, mt, 0, 0);
		void *entry;
		u64 sum = 0;

		mas_for_each(&mas, entry, ULONG_MAX)
			sum += mas.index ^ mas.last ^ xa_to_value(entry);
		last = sum;
		__asm__ volatile("" : : "r"(last) : "memory");
	}
	return last;
}

TIMED void timed_part_erase(struct maple_tree *mt, const u64 *p, u64 n)
{
	for (u64 k = 0; k < n; k++)
		mtree_erase(mt, 16 * p[k] + 3);
}

TIMED void timed_part_overwrite(struct maple_tree *mt, u64 *rng, u64 n, u64 q)
{
	u64 s = *rng, span = 16 * n;

	for (u64 k = 0; k < q; k++) {
		u64 a = sm_next(&s) % span;
		u64 len = 1 + sm_next(&s) % 64;

		mtree_store_range(mt, a, a + len - 1, val(k + 1), GFP_KERNEL);
	}
	*rng = s;
}

TIMED int timed_part_dup(struct maple_tree *src, struct maple_tree *out, u64 r)
{
	for (u64 k = 0; k < r; k++) {
		int ret;

		mt_init_flags(&out[k], MT_FLAGS_ALLOC_RANGE);
		ret = __mt_dup(src, &out[k], GFP_KERNEL);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * rebuild: what fork did before __mt_dup (Linux 6.1 - 6.7 dup_mmap): a new
 * tree, bulk mode announced with mas_expected_entries(), then every range of
 * the source stored in order through one ma_state, then mas_destroy().
 * With plain = 1, ordinary mtree_store_range() calls instead.
 */
TIMED int timed_part_rebuild(struct maple_tree *src, struct maple_tree *out,
			     u64 r, u64 n, int plain)
{
	for (u64 k = 0; k < r; k++) {
		MA_STATE(old, src, 0, 0);
		void *entry;

		mt_init_flags(&out[k], MT_FLAGS_ALLOC_RANGE);
		if (plain) {
			mas_for_each(&old, entry, ULONG_MAX) {
				int ret = mtree_store_range(&out[k], old.index,
							    old.last, entry,
							    GFP_KERNEL);
				if (ret)
					return ret;
			}
		} else {
			MA_STATE(mas, &out[k], 0, 0);
			int ret = mas_expected_entries(&mas, n);

			if (ret)
				return ret;
			mas_for_each(&old, entry, ULONG_MAX) {
				mas_set_range(&mas, old.index, old.last);
				mas_store(&mas, entry);
				if (mas_is_err(&mas)) {
					mas_destroy(&mas);
					return -ENOMEM;
				}
			}
			mas_destroy(&mas);
		}
	}
	return 0;
}

TIMED u64 timed_part_gap(struct maple_tree *mt, u64 *rng, u64 q, u64 max,
			 int rev)
{
	u64 s = *rng, sum = 0;

	for (u64 k = 0; k < q; k++) {
		u64 size = 1 + sm_next(&s) % 64;
		MA_STATE(mas, mt, 0, 0);
		int ret = rev ? mas_empty_area_rev(&mas, 0, max, size)
			      : mas_empty_area(&mas, 0, max, size);

		if (!ret)
			sum += mas.index;
	}
	*rng = s;
	return sum;
}

TIMED u64 timed_part_gap_win(struct maple_tree *mt, u64 *rng, u64 q, u64 pos,
			     int rev)
{
	u64 s = *rng, sum = 0;

	for (u64 k = 0; k < q; k++) {
		u64 size = 1 + sm_next(&s) % 64;
		u64 a = sm_next(&s) % pos;
		MA_STATE(mas, mt, 0, 0);
		int ret = rev ? mas_empty_area_rev(&mas, a, a + 4095, size)
			      : mas_empty_area(&mas, a, a + 4095, size);

		if (!ret)
			sum += mas.index;
	}
	*rng = s;
	return sum;
}

/* --------------------------------------------------------- workloads */

enum wl {
	W_SEQ_STORE, W_RAND_STORE, W_LOAD, W_ITER, W_ERASE, W_OVERWRITE,
	W_DUP, W_REBUILD, W_GAP_REV, W_GAP_FWD, W_GAP_WIN_REV, W_GAP_WIN_FWD,
	W_COUNT
};

static const char *const wl_name[W_COUNT] = {
	"seq_store", "rand_store", "load", "iter", "erase", "overwrite",
	"dup", "rebuild", "gap_rev", "gap_fwd", "gap_win_rev", "gap_win_fwd",
};

static int wl_has_q(enum wl w)
{
	return w == W_LOAD || w == W_OVERWRITE || w >= W_GAP_REV;
}

static int rebuild_plain;

static struct rep run_seq_store(u64 n)
{
	struct rep r = { .ops = n };
	struct maple_tree mt;
	double t0;

	mt_init_flags(&mt, 0);
	t0 = now_ns();
	timed_part_seq_store(&mt, n);
	r.ns = now_ns() - t0;
	r.bpe = bytes_per_entry(kpeer_cache_live(), n);
	r.checksum = checksum(&mt);
	__mt_destroy(&mt);
	return r;
}

static struct rep run_rand_store(u64 n)
{
	struct rep r = { .ops = n };
	struct maple_tree mt;
	u64 s = SEED, *p = perm(n, &s);
	double t0;

	mt_init_flags(&mt, 0);
	t0 = now_ns();
	timed_part_rand_store(&mt, p, n);
	r.ns = now_ns() - t0;
	r.bpe = bytes_per_entry(kpeer_cache_live(), n);
	r.checksum = checksum(&mt);
	__mt_destroy(&mt);
	free(p);
	return r;
}

static struct rep run_load(u64 n, u64 q)
{
	struct rep r = { .ops = q };
	struct maple_tree mt;
	u64 s = SEED;
	double t0;

	mt_init_flags(&mt, 0);
	seq_fill(&mt, n);
	r.bpe = bytes_per_entry(kpeer_cache_live(), n);
	t0 = now_ns();
	r.checksum = timed_part_load(&mt, &s, n, q);
	r.ns = now_ns() - t0;
	__mt_destroy(&mt);
	return r;
}

static struct rep run_iter(u64 n)
{
	struct rep r = { .ops = 10 * n };
	struct maple_tree mt;
	double t0;

	mt_init_flags(&mt, 0);
	seq_fill(&mt, n);
	r.bpe = bytes_per_entry(kpeer_cache_live(), n);
	t0 = now_ns();
	r.checksum = timed_part_iter(&mt);
	r.ns = now_ns() - t0;
	__mt_destroy(&mt);
	return r;
}

static struct rep run_erase(u64 n)
{
	struct rep r = { .ops = n };
	struct maple_tree mt;
	u64 s = SEED, *p;
	double t0;

	mt_init_flags(&mt, 0);
	seq_fill(&mt, n);
	r.bpe = bytes_per_entry(kpeer_cache_live(), n);
	p = perm(n, &s);
	t0 = now_ns();
	timed_part_erase(&mt, p, n);
	r.ns = now_ns() - t0;
	r.checksum = count_ranges(&mt);
	__mt_destroy(&mt);
	free(p);
	return r;
}

static struct rep run_overwrite(u64 n, u64 q)
{
	struct rep r = { .ops = q };
	struct maple_tree mt;
	u64 s = SEED;
	double t0;

	mt_init_flags(&mt, 0);
	seq_fill(&mt, n);
	r.bpe = bytes_per_entry(kpeer_cache_live(), n);
	t0 = now_ns();
	timed_part_overwrite(&mt, &s, n, q);
	r.ns = now_ns() - t0;
	r.checksum = checksum(&mt);
	__mt_destroy(&mt);
	return r;
}

static struct rep run_copies(u64 n, int rebuild)
{
	u64 copies = dup_copies(n);
	struct rep r = { .ops = copies };
	struct maple_tree src, *out = calloc(copies, sizeof(*out));
	long before;
	double t0;
	int ret;

	if (!out) {
		fprintf(stderr, "kernel_peer: out of memory (copies)\n");
		exit(2);
	}
	mt_init_flags(&src, MT_FLAGS_ALLOC_RANGE);
	seq_fill(&src, n);
	before = kpeer_cache_live();
	t0 = now_ns();
	if (rebuild)
		ret = timed_part_rebuild(&src, out, copies, n, rebuild_plain);
	else
		ret = timed_part_dup(&src, out, copies);
	r.ns = now_ns() - t0;
	must(ret, rebuild ? "rebuild" : "__mt_dup");
	r.bpe = bytes_per_entry((kpeer_cache_live() - before) / (long)copies, n);
	r.checksum = checksum(&out[0]);
	if (checksum(&out[copies - 1]) != r.checksum) {
		fprintf(stderr, "kernel_peer: the copies differ\n");
		exit(2);
	}
	for (u64 k = 0; k < copies; k++)
		__mt_destroy(&out[k]);
	__mt_destroy(&src);
	free(out);
	return r;
}

static struct rep run_gaps(enum wl w, u64 n, u64 q)
{
	struct rep r = { .ops = q };
	struct maple_tree mt;
	u64 s = SEED, pos = 0;
	double t0;

	mt_init_flags(&mt, MT_FLAGS_ALLOC_RANGE);
	for (u64 i = 0; i < n; i++) {
		u64 gap = sm_next(&s) % 64;
		u64 len = 1 + sm_next(&s) % 32;
		u64 st = pos + gap;

		must(mtree_store_range(&mt, st, st + len - 1, val(i + 1),
				       GFP_KERNEL), "store");
		pos = st + len;
	}
	r.bpe = bytes_per_entry(kpeer_cache_live(), n);
	t0 = now_ns();
	if (w == W_GAP_REV || w == W_GAP_FWD)
		r.checksum = timed_part_gap(&mt, &s, q, pos + 1000,
					    w == W_GAP_REV);
	else
		r.checksum = timed_part_gap_win(&mt, &s, q, pos,
						w == W_GAP_WIN_REV);
	r.ns = now_ns() - t0;
	__mt_destroy(&mt);
	return r;
}

static struct rep run_one(enum wl w, u64 n, u64 q)
{
	switch (w) {
	case W_SEQ_STORE:	return run_seq_store(n);
	case W_RAND_STORE:	return run_rand_store(n);
	case W_LOAD:		return run_load(n, q);
	case W_ITER:		return run_iter(n);
	case W_ERASE:		return run_erase(n);
	case W_OVERWRITE:	return run_overwrite(n, q);
	case W_DUP:		return run_copies(n, 0);
	case W_REBUILD:		return run_copies(n, 1);
	default:		return run_gaps(w, n, q);
	}
}

/* ------------------------------------------------ reference checksums */

static const u64 copy_ns[] = { 21, 121, 221, 421, 821, 1621, 3221, 6421,
			       12821, 25621, 51221, 1000000 };
static const u64 copy_sums[] = { 270ULL, 7420ULL, 24538ULL, 88870ULL,
				 337470ULL, 1314670ULL, 5189070ULL,
				 20617870ULL, 82195470ULL, 328230670ULL,
				 1311821070ULL, 500000500000ULL };

/* BENCHMARKS.md's reference checksum for (w, n, q); 0 = none known. */
static int reference(enum wl w, u64 n, u64 q, u64 *out)
{
	switch (w) {
	case W_SEQ_STORE: case W_RAND_STORE: case W_ITER:
		if (n != 1000000) return 0;
		*out = 500000500000ULL; return 1;
	case W_ERASE:
		if (n != 1000000) return 0;
		*out = 0; return 1;
	case W_LOAD:
		if (n != 1000000 || q != 10000000) return 0;
		*out = 3126729663903ULL; return 1;
	case W_OVERWRITE:
		if (n != 1000000 || q != 1000000) return 0;
		*out = 513537956813ULL; return 1;
	case W_DUP: case W_REBUILD:
		for (size_t i = 0; i < sizeof(copy_ns) / sizeof(copy_ns[0]); i++)
			if (copy_ns[i] == n) {
				*out = copy_sums[i];
				return 1;
			}
		return 0;
	case W_GAP_REV: case W_GAP_FWD: case W_GAP_WIN_REV: case W_GAP_WIN_FWD:
		if (n != 100000 || q != 1000000) return 0;
		*out = w == W_GAP_REV ? 4813874490181ULL :
		       w == W_GAP_FWD ? 75770038898ULL :
		       w == W_GAP_WIN_REV ? 2359439146016ULL : 2355743818707ULL;
		return 1;
	default:
		return 0;
	}
}

/* Checksums at other sizes, where they follow from the definitions: a tree
 * made by seq_store(N) holds (16i, 16i+9, i+1), and 16i ^ (16i+9) = 9, so its
 * checksum is the sum over i of 9 ^ (i+1); erase leaves 0 ranges. */
static int closed_form(enum wl w, u64 n, u64 *out)
{
	u64 s = 0;

	if (w != W_SEQ_STORE && w != W_RAND_STORE && w != W_ITER &&
	    w != W_DUP && w != W_REBUILD && w != W_ERASE)
		return 0;
	if (w == W_ERASE) {
		*out = 0;
		return 1;
	}
	for (u64 i = 0; i < n; i++)
		s += 9 ^ (i + 1);
	*out = s;
	return 1;
}

/* ------------------------------------------------------------- main */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: kernel_peer -w WORKLOAD[,W..] [--n N] [--q Q] [--reps R] [--aged]\n"
"                   [--rebuild-plain]\n"
"  workloads: seq_store rand_store load iter erase overwrite dup rebuild\n"
"             gap_rev gap_fwd gap_win_rev gap_win_fwd, or all\n"
"  --n / --q   sizes (default: BENCHMARKS.md's; dup and rebuild run every N\n"
"              of the fork table when --n is not given)\n"
"  --reps R    repetitions in this process, median reported (default 5)\n"
"  --aged      do not reset the node allocator before each repetition\n"
"              (default: fresh, as BENCHMARKS.md's kernel reference \"fresh\" column)\n"
"  --rebuild-plain  rebuild by plain mtree_store_range() instead of the\n"
"              bulk mode (mas_expected_entries)\n"
"Prints BENCHMARKS.md's line format (impl=kernel) on stdout; the checksum\n"
"check against BENCHMARKS.md (or the closed form for seq_store-made trees)\n"
"on stderr. Exit status 3 if any checksum mismatched.\n");
}

static u64 parse_u64(const char *s, const char *opt)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || end == s) {
		fprintf(stderr, "kernel_peer: bad value for %s: %s\n", opt, s);
		exit(1);
	}
	return v;
}

int main(int argc, char **argv)
{
	int want[W_COUNT] = { 0 }, any = 0, aged = 0, bad = 0;
	u64 n_opt = 0, q_opt = 0, reps = 5;
	int have_n = 0, have_q = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--aged")) {
			aged = 1;
		} else if (!strcmp(a, "--rebuild-plain")) {
			rebuild_plain = 1;
		} else if (!v) {
			fprintf(stderr, "kernel_peer: %s needs a value\n", a);
			usage(stderr);
			return 1;
		} else if (!strcmp(a, "-w") || !strcmp(a, "--workload")) {
			char *list = strdup(v), *tok, *save = NULL;

			for (tok = strtok_r(list, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				int found = 0;

				for (int w = 0; w < W_COUNT; w++)
					if (!strcmp(tok, "all") ||
					    !strcmp(tok, wl_name[w])) {
						want[w] = found = any = 1;
					}
				if (!found) {
					fprintf(stderr, "kernel_peer: unknown workload %s\n", tok);
					return 1;
				}
			}
			free(list);
			i++;
		} else if (!strcmp(a, "--n")) {
			n_opt = parse_u64(v, a); have_n = 1; i++;
		} else if (!strcmp(a, "--q")) {
			q_opt = parse_u64(v, a); have_q = 1; i++;
		} else if (!strcmp(a, "--reps")) {
			reps = parse_u64(v, a); i++;
		} else {
			fprintf(stderr, "kernel_peer: unknown option %s\n", a);
			usage(stderr);
			return 1;
		}
	}
	if (!any) {
		usage(stderr);
		return 1;
	}
	if (!reps)
		reps = 1;

	kpeer_maple_tree_init();

	for (int w = 0; w < W_COUNT; w++) {
		u64 ns_list[16];
		size_t nn = 0;

		if (!want[w])
			continue;
		if (have_n)
			ns_list[nn++] = n_opt;
		else if (w == W_DUP || w == W_REBUILD)
			for (size_t i = 0; i < sizeof(copy_ns) / sizeof(copy_ns[0]); i++)
				ns_list[nn++] = copy_ns[i];
		else
			ns_list[nn++] = w >= W_GAP_REV ? 100000 : 1000000;

		for (size_t k = 0; k < nn; k++) {
			u64 n = ns_list[k];
			u64 q = have_q ? q_opt : (w == W_LOAD ? 10000000 : 1000000);
			double *nsop = calloc(reps, sizeof(double));
			u64 sum = 0, expect;
			double bpe = -1;
			int known;

			if (n == 0 || (w >= W_GAP_REV && q == 0)) {
				fprintf(stderr, "kernel_peer: %s needs N > 0\n", wl_name[w]);
				return 1;
			}
			for (u64 r = 0; r < reps; r++) {
				struct rep rep;

				if (!aged)
					kpeer_cache_reset();
				rep = run_one(w, n, q);
				nsop[r] = rep.ns / (double)rep.ops;
				if (r && rep.checksum != sum) {
					fprintf(stderr, "kernel_peer: %s checksum differs between repetitions\n",
						wl_name[w]);
					bad = 1;
				}
				sum = rep.checksum;
				bpe = rep.bpe;
			}
			qsort(nsop, reps, sizeof(double), cmp_double);
			double med = reps % 2 ? nsop[reps / 2]
					      : (nsop[reps / 2 - 1] + nsop[reps / 2]) / 2;

			printf("workload=%s impl=kernel n=%llu", wl_name[w],
			       (unsigned long long)n);
			if (wl_has_q(w))
				printf(" q=%llu", (unsigned long long)q);
			printf(" ns_per_op=%.1f checksum=%llu", med,
			       (unsigned long long)sum);
			if (bpe >= 0)
				printf(" bytes_per_entry=%.1f", bpe);
			printf("\n");
			fflush(stdout);

			known = reference(w, n, q, &expect);
			if (!known)
				known = closed_form(w, n, &expect);
			if (known && expect != sum) {
				fprintf(stderr, "kernel_peer: %s n=%llu q=%llu: checksum %llu MISMATCH (expected %llu)\n",
					wl_name[w], (unsigned long long)n,
					wl_has_q(w) ? (unsigned long long)q : 0ULL,
					(unsigned long long)sum,
					(unsigned long long)expect);
				bad = 1;
			} else {
				fprintf(stderr, "kernel_peer: %s n=%llu q=%llu: checksum %llu %s\n",
					wl_name[w], (unsigned long long)n,
					wl_has_q(w) ? (unsigned long long)q : 0ULL,
					(unsigned long long)sum,
					known ? "ok" : "(no reference for this size)");
			}
			free(nsop);
		}
	}
	return bad ? 3 : 0;
}
