/*
 * priority_timed.c -- priority/timed: Slurm's stock priority/multifactor
 * (Debian's priority_multifactor.so) with the same timing the priority/wasm
 * shim logs, so that BENCHMARKS.md compares the two by one method
 * (shim-bench.sh loads it as PriorityType=priority/timed).
 *
 * Every priority_p_* call is forwarded to the stock plugin, which this plugin
 * dlopens from STOCK_DIR. priority_p_set is timed by the same clock as the
 * shim's (CLOCK_MONOTONIC around the call). A pass is multifactor's Fair Tree
 * work of one decay-thread loop: fair_tree_decay() (fair_tree.c: usage, the
 * tree's fair-share, every pending job's factors). The stock plugin calls it
 * through its PLT, so this plugin makes its own symbols global before loading
 * the stock one and defines fair_tree_decay, which times the real one.
 * Each pass logs, at info level:
 *     priority/timed: pass: <ms> ms in fair_tree_decay; priority_p_set since
 *     the last pass: <n> calls, <us> us each
 *
 * Only for measurements: it assumes Slurm's Fair Tree (PriorityFlags without
 * NO_FAIR_TREE, 22.05's default). Failure: init fails (one error() line)
 * when the stock plugin or one of its functions cannot be found.
 */

#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>
#include <time.h>

#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/slurm_priority.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#define EXPORT __attribute__((visibility("default")))

#ifndef STOCK_DIR
#define STOCK_DIR "/usr/lib/x86_64-linux-gnu/slurm-wlm"
#endif

EXPORT const char plugin_name[] = "Priority timing wrapper of multifactor";
EXPORT const char plugin_type[] = "priority/timed";
EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;

static void *stock;
static int (*s_init)(void);
static int (*s_fini)(void);
static uint32_t (*s_set)(uint32_t, job_record_t *);
static void (*s_reconfig)(bool);
static void (*s_set_assoc_usage)(slurmdb_assoc_rec_t *);
static double (*s_calc_fs_factor)(long double, long double);
static List (*s_factors_list)(priority_factors_request_msg_t *, uid_t);
static void (*s_job_end)(job_record_t *);
static void (*s_fair_tree_decay)(List, time_t);

/* priority_p_set's cost since the last pass: set runs under the job write
 * lock, and so does the pass's report, so they need no lock of their own. */
static uint64_t set_calls, set_ns;

/* Monotonic nanoseconds (the shim's _now_ns). */
static uint64_t _now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Looks `name` up in the stock plugin into *fn; false (after error()) when
 * it is missing. */
static bool _sym(const char *name, void *fn)
{
	if (!(*(void **) fn = dlsym(stock, name))) {
		error("%s: no %s in the stock plugin: %s", plugin_type, name,
		      dlerror());
		return false;
	}
	return true;
}

/*
 * Loads the stock plugin (after making this one's symbols global, so that
 * its call to fair_tree_decay reaches ours) and runs its init. Fails when
 * either dlopen fails or a function is missing.
 */
EXPORT extern int init(void)
{
	Dl_info self;

	if (!dladdr((void *) init, &self) ||
	    !dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_GLOBAL)) {
		error("%s: cannot make its symbols global: %s", plugin_type,
		      dlerror());
		return SLURM_ERROR;
	}
	if (!(stock = dlopen(STOCK_DIR "/priority_multifactor.so", RTLD_LAZY))) {
		error("%s: %s", plugin_type, dlerror());
		return SLURM_ERROR;
	}
	if (!_sym("init", &s_init) || !_sym("fini", &s_fini) ||
	    !_sym("priority_p_set", &s_set) ||
	    !_sym("priority_p_reconfig", &s_reconfig) ||
	    !_sym("priority_p_set_assoc_usage", &s_set_assoc_usage) ||
	    !_sym("priority_p_calc_fs_factor", &s_calc_fs_factor) ||
	    !_sym("priority_p_get_priority_factors_list", &s_factors_list) ||
	    !_sym("priority_p_job_end", &s_job_end) ||
	    !_sym("fair_tree_decay", &s_fair_tree_decay))
		return SLURM_ERROR;
	return s_init();
}

/* Stops the stock plugin (its decay thread); the library stays loaded. */
EXPORT extern int fini(void)
{
	return s_fini ? s_fini() : SLURM_SUCCESS;
}

/* The stock plugin's Fair Tree pass, timed; logs the pass and the set calls
 * since the previous one (set_* read under the job write lock, which
 * fair_tree_decay takes and releases itself, so they are read after it under
 * our own short hold of that lock). */
EXPORT extern void fair_tree_decay(List jobs, time_t start)
{
	slurmctld_lock_t job_write_lock =
		{ NO_LOCK, WRITE_LOCK, NO_LOCK, NO_LOCK, NO_LOCK };
	uint64_t t = _now_ns();

	s_fair_tree_decay(jobs, start);
	t = _now_ns() - t;
	lock_slurmctld(job_write_lock);
	info("%s: pass: %.3f ms in fair_tree_decay over %d jobs; priority_p_set since the last pass: %" PRIu64 " calls, %.1f us each",
	     plugin_type, t / 1e6, list_count(jobs), set_calls,
	     set_calls ? set_ns / 1e3 / set_calls : 0.0);
	set_calls = set_ns = 0;
	unlock_slurmctld(job_write_lock);
}

/* The stock priority_p_set, timed. Called with the job write lock held. */
EXPORT extern uint32_t priority_p_set(uint32_t last_prio, job_record_t *job_ptr)
{
	uint64_t t = _now_ns();
	uint32_t prio = s_set(last_prio, job_ptr);

	set_ns += _now_ns() - t;
	set_calls++;
	return prio;
}

/* The rest are forwarded unchanged. */
EXPORT extern void priority_p_reconfig(bool assoc_clear)
{
	s_reconfig(assoc_clear);
}

EXPORT extern void priority_p_set_assoc_usage(slurmdb_assoc_rec_t *assoc)
{
	s_set_assoc_usage(assoc);
}

EXPORT extern double priority_p_calc_fs_factor(long double usage_efctv,
					       long double shares_norm)
{
	return s_calc_fs_factor(usage_efctv, shares_norm);
}

EXPORT extern List priority_p_get_priority_factors_list(
	priority_factors_request_msg_t *req_msg, uid_t uid)
{
	return s_factors_list(req_msg, uid);
}

EXPORT extern void priority_p_job_end(job_record_t *job_ptr)
{
	s_job_end(job_ptr);
}
