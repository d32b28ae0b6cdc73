/*
 * priority_wasm.c: the priority/wasm plugin of Slurm 22.05: job priorities
 * from a sandboxed WebAssembly priority component (priority_basic.wasm,
 * priority_multifactor.wasm or a site's own), run by libslurm_wasm.so.
 *
 * In slurmctld:
 *   - init() opens the host configuration (see common/swasm_shim.h), loads
 *     the component of its [plugins.priority] slot and gives it the priority
 *     configuration (slurm.conf's Priority* settings, partitions, TRES), the
 *     QOS table and the association tree; any failure is one error() line
 *     and init() fails, so slurmctld stops ("failed to initialize priority
 *     plugin"): it never runs with another plugin than configured;
 *   - priority_p_set() is the component's `set`;
 *   - with accounting in slurmdbd, a thread runs a pass every
 *     PriorityCalcPeriod, as multifactor's decay thread does: Slurm's own
 *     usage bookkeeping (usage.c), the component's `calculate` over running
 *     and pending jobs, the new priorities and sprio rows written back, the
 *     association figures written into assoc_mgr (for sshare), and changes
 *     to associations and QOS passed as updates (22.05 has no callback for
 *     them: the shim compares assoc_mgr's tables with what it sent);
 *   - sprio is answered from the rows of the last pass (factors.c), sshare
 *     from assoc_mgr, priority_p_job_end charges as multifactor does and
 *     tells the component.
 * A component that keeps no usage (its association-usages is empty, as
 * priority/basic's) gets priority/basic's bookkeeping instead of
 * multifactor's: run-seconds are given back at job end, nothing decays.
 *
 * In every other process (sshare, sprio and the other clients load priority
 * plugins too) the library is never opened: priority_p_calc_fs_factor is
 * plain arithmetic and the rest is never called there.
 *
 * When the component fails a call, the host's failure policy (restart, fail,
 * fallback) has already acted; the shim logs the message and falls back to
 * priority/basic's rule for that job (priority_p_set) or skips the pass's
 * result (a later pass retries).
 */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <sys/time.h>
#if HAVE_SYS_PRCTL_H
#include <sys/prctl.h>
#endif
#include "slurm/slurm_errno.h"
#include "src/common/assoc_mgr.h"
#include "src/common/run_in_daemon.h"
#include "src/common/site_factor.h"
#include "src/common/slurm_priority.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "swasm_shim.h"

#include "factors.h"
#include "idmap.h"
#include "records.h"
#include "usage.h"

/* What Slurm's plugin loader looks up; everything else is hidden
 * (-fvisibility=hidden), so that no symbol of the daemon can take the
 * place of one of the shim's. */
#define EXPORT __attribute__((visibility("default")))

EXPORT const char plugin_name[] =
	"Priority WASM plugin (a sandboxed WebAssembly priority component)";
EXPORT const char plugin_type[] = "priority/wasm";
EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;

#define SHIM "priority/wasm"

static const swasm_api_t *api;
static swasm_host *host;
static swasm_priority_plugin *plugin;

/* The component keeps association usage (multifactor's bookkeeping). */
static bool usage_mode;
/* The component has no record of when usage was last charged (a first
 * start without its state file): until its first pass, running jobs are
 * given to it as started no earlier than Slurm's last pass, so that it
 * charges what Slurm charges. */
static bool start_floor_needed;
/* priority_p_reconfig() asked for the configuration to be given again. */
static bool reconfig_pending, reconfig_assoc_clear;

/* Jobs the component was given through `set`, with a fingerprint of what it
 * was given (guarded by the job write lock, held by every caller). */
static idmap_t known_jobs;
static uint32_t pass_number = 1;

/* What priority_p_set cost since the last pass (guarded by the job write
 * lock), logged by each pass at debug level. */
static uint64_t set_calls, set_ns;

/* Associations and QOS as last sent (guarded by sync_lock). */
static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
static idmap_t sent_assocs, sent_qos;

/* The pass thread. */
static pthread_t pass_thread;
static bool pass_thread_running;
static pthread_mutex_t pass_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pass_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t pass_init_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pass_init_cond = PTHREAD_COND_INITIALIZER;
static bool pass_started, shutdown_requested;
static time_t last_reset;

static uint64_t _now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- errors ---- */

/* Logs a failed call and clears the error. */
static void _failed(const char *what, swasm_error *err)
{
	error("%s: %s failed: %s", SHIM, what,
	      err->message ? err->message : "unknown error");
	api->swasm_error_clear(err);
}

static char *_state_file(void)
{
	return xstrdup_printf("%s/priority_wasm.state",
			      slurm_conf.state_save_location);
}

/* ---- configuration ---- */

/* Gives the component the configuration again (partitions changed, or
 * priority_p_reconfig). `running` jobs (NULL: none) matter with
 * assoc_clear. Caller holds the job write and partition read locks, or is
 * init(). */
static void _reconfigure(bool assoc_clear, const swasm_job *running,
			 size_t n_running)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_priority_config config;
	arena_t arena = { 0 };

	records_config(&arena, &config);
	if (api->swasm_priority_reconfig(plugin, &config, assoc_clear, running,
					 n_running, &err))
		_failed("reconfig", &err);
	arena_free(&arena);
}

/* scontrol reconfigure: the component the host configuration names now,
 * put in place if it changed, the replaced one running beside it for the
 * slot's probation_calls and taking back over if it faults
 * (swasm_priority_reload). A reload that cannot be made is logged and the
 * serving component goes on. */
static void _reload(void)
{
	swasm_error err = SWASM_ERROR_INIT;
	bool replaced = false;

	if (api->swasm_priority_reload(plugin, &replaced, &err))
		_failed("reload", &err);
	else if (replaced)
		info("%s: reloaded the component the host configuration names",
		     SHIM);
}

/* Translates `job_ptr`, giving the configuration again first when the
 * job's partitions are not in the table the component has. */
static bool _job(arena_t *arena, job_record_t *job_ptr, time_t floor,
		 swasm_job *out)
{
	if (records_job(arena, job_ptr, floor, out))
		return true;
	_reconfigure(false, NULL, 0);
	if (records_job(arena, job_ptr, floor, out))
		return true;
	error("%s: %pJ names a partition outside the partition table", SHIM,
	      job_ptr);
	return false;
}

/* ---- associations and QOS ---- */

/*
 * Sends the associations and QOS that are new or changed since the last
 * call, and removes those that disappeared. Takes the assoc_mgr read locks
 * to copy them, and calls the component after releasing them.
 */
static void _sync_tables(void)
{
	assoc_mgr_lock_t locks = { .assoc = READ_LOCK, .qos = READ_LOCK,
				   .tres = READ_LOCK };
	swasm_error err = SWASM_ERROR_INIT;
	swasm_association_update *au = NULL;
	swasm_qos_update *qu = NULL;
	uint64_t *afp = NULL, *qfp = NULL;
	size_t na = 0, nq = 0, cap;
	static uint32_t seen;
	arena_t arena = { 0 };
	slurmdb_assoc_rec_t *a;
	slurmdb_qos_rec_t *q;
	ListIterator itr;

	slurm_mutex_lock(&sync_lock);
	seen++;
	assoc_mgr_lock(&locks);
	cap = (assoc_mgr_qos_list ? list_count(assoc_mgr_qos_list) : 0) +
	      sent_qos.count + 1;
	qu = arena_alloc(&arena, cap * sizeof(*qu));
	qfp = arena_alloc(&arena, cap * sizeof(*qfp));
	if (assoc_mgr_qos_list) {
		itr = list_iterator_create(assoc_mgr_qos_list);
		while ((q = list_next(itr))) {
			swasm_qos *rec = arena_alloc(&arena, sizeof(*rec));
			idmap_entry_t *e = idmap_get(&sent_qos, q->id);
			records_qos(&arena, q, rec);
			e->seen = seen;
			qfp[nq] = records_qos_fingerprint(rec);
			if (e->fingerprint == qfp[nq])
				continue;
			qu[nq].kind = SWASM_UPDATE_UPSERT;
			qu[nq].id = q->id;
			qu[nq].qos = rec;
			nq++;
		}
		list_iterator_destroy(itr);
	}
	cap = (assoc_mgr_assoc_list ? list_count(assoc_mgr_assoc_list) : 0) +
	      sent_assocs.count + 1;
	au = arena_alloc(&arena, cap * sizeof(*au));
	afp = arena_alloc(&arena, cap * sizeof(*afp));
	if (assoc_mgr_assoc_list) {
		itr = list_iterator_create(assoc_mgr_assoc_list);
		while ((a = list_next(itr))) {
			swasm_association *rec = arena_alloc(&arena, sizeof(*rec));
			idmap_entry_t *e = idmap_get(&sent_assocs, a->id);
			records_association(&arena, a, rec);
			e->seen = seen;
			afp[na] = records_association_fingerprint(rec);
			if (e->fingerprint == afp[na])
				continue;
			au[na].kind = SWASM_UPDATE_UPSERT;
			au[na].id = a->id;
			au[na].association = rec;
			na++;
		}
		list_iterator_destroy(itr);
	}
	assoc_mgr_unlock(&locks);

	/* what disappeared */
	for (size_t i = 0; i < sent_qos.capacity; i++) {
		idmap_entry_t *e = &sent_qos.slots[i];
		if (e->id && (e->seen != seen)) {
			qu[nq].kind = SWASM_UPDATE_REMOVE;
			qu[nq].id = e->id;
			nq++;
		}
	}
	for (size_t i = 0; i < sent_assocs.capacity; i++) {
		idmap_entry_t *e = &sent_assocs.slots[i];
		if (e->id && (e->seen != seen)) {
			au[na].kind = SWASM_UPDATE_REMOVE;
			au[na].id = e->id;
			na++;
		}
	}

	if (nq && api->swasm_priority_update_qos(plugin, qu, nq, &err)) {
		_failed("update-qos", &err);
	} else {
		for (size_t i = 0; i < nq; i++) {
			if (qu[i].kind == SWASM_UPDATE_REMOVE)
				idmap_remove(&sent_qos, qu[i].id);
			else
				idmap_get(&sent_qos, qu[i].id)->fingerprint = qfp[i];
		}
	}
	if (na && api->swasm_priority_update_associations(plugin, au, na, &err)) {
		_failed("update-associations", &err);
	} else {
		for (size_t i = 0; i < na; i++) {
			if (au[i].kind == SWASM_UPDATE_REMOVE)
				idmap_remove(&sent_assocs, au[i].id);
			else
				idmap_get(&sent_assocs, au[i].id)->fingerprint =
					afp[i];
		}
	}
	if (nq || na)
		debug("%s: sent %zu QOS and %zu association changes", SHIM, nq, na);
	slurm_mutex_unlock(&sync_lock);
	arena_free(&arena);
}

/*
 * After a restored state: the component may hold associations that
 * assoc_mgr no longer has; mark them as sent so that the next
 * _sync_tables() removes them (and upserts the rest, usage kept).
 */
static void _adopt_restored_associations(void)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_association_usage_list list = { 0 };

	if (api->swasm_priority_association_usages(plugin, &list, &err)) {
		_failed("association-usages", &err);
		return;
	}
	slurm_mutex_lock(&sync_lock);
	for (size_t i = 0; i < list.n_items; i++)
		(void) idmap_get(&sent_assocs, list.items[i].id);
	slurm_mutex_unlock(&sync_lock);
	api->swasm_association_usage_list_free(&list);
}

/* ---- association figures (sshare) ---- */

/*
 * Writes the component's figures of every association into assoc_mgr (as
 * multifactor's pass leaves them for sshare), and logs when its usage
 * drifts from Slurm's own (usage.c), which would make its fair-share
 * disagree with sshare's RawUsage.
 */
static void _write_figures(void)
{
	assoc_mgr_lock_t locks = { .assoc = WRITE_LOCK };
	swasm_error err = SWASM_ERROR_INIT;
	swasm_association_usage_list list = { 0 };
	uint32_t worst_id = 0;
	double worst = 0, worst_ours = 0, worst_slurm = 0;
	size_t drifted = 0;
	idmap_t by_id = { 0 };
	slurmdb_assoc_rec_t *a;
	ListIterator itr;

	if (api->swasm_priority_association_usages(plugin, &list, &err)) {
		_failed("association-usages", &err);
		return;
	}
	for (size_t i = 0; i < list.n_items; i++)
		idmap_get(&by_id, list.items[i].id)->data = &list.items[i];
	assoc_mgr_lock(&locks);
	/* the root, as multifactor leaves it: all the usage, and no level */
	if (assoc_mgr_root_assoc && assoc_mgr_root_assoc->usage) {
		assoc_mgr_root_assoc->usage->usage_efctv = 1.0;
		if (usage_fair_tree())
			assoc_mgr_root_assoc->usage->level_fs = (long double) NO_VAL;
	}
	itr = list_iterator_create(assoc_mgr_assoc_list);
	while ((a = list_next(itr))) {
		idmap_entry_t *e = idmap_find(&by_id, a->id);
		const swasm_association_usage *u = e ? e->data : NULL;
		double slurm_raw, diff;

		if (!u || !a->usage || (a == assoc_mgr_root_assoc))
			continue;
		a->usage->usage_norm = u->usage_norm;
		a->usage->usage_efctv = u->usage_effective;
		if (a->user)
			a->usage->fs_factor = u->fair_share;
		if (u->has_level_fs)
			a->usage->level_fs = u->level_fs;
		else if (usage_fair_tree() &&
			 (a->shares_raw == SLURMDB_FS_USE_PARENT) && !a->user)
			a->usage->level_fs = (long double) NO_VAL;
		slurm_raw = (double) a->usage->usage_raw;
		diff = fabs(u->usage_raw - slurm_raw);
		if (diff > 1e-6 * fmax(1.0, fabs(slurm_raw))) {
			drifted++;
			if (diff > worst) {
				worst = diff;
				worst_id = u->id;
				worst_ours = u->usage_raw;
				worst_slurm = slurm_raw;
			}
		}
	}
	list_iterator_destroy(itr);
	assoc_mgr_unlock(&locks);
	idmap_clear(&by_id, NULL, NULL);
	api->swasm_association_usage_list_free(&list);
	if (drifted)
		info("%s: the plugin's usage of %zu associations differs from Slurm's; the most, association %u: %.6f in the plugin, %.6f in Slurm's accounting",
		     SHIM, drifted, worst_id, worst_ours, worst_slurm);
}

/* ---- the pass ---- */

static void _forget(idmap_entry_t *e, void *arg)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_job gone;

	/* the component forgets the job, charging nothing (no start time) */
	memset(&gone, 0, sizeof(gone));
	gone.job_id = e->id;
	gone.state = SWASM_JOB_CANCELLED;
	gone.has_time_limit = false;
	if (api->swasm_priority_job_end(plugin, &gone, &err))
		_failed("job-end", &err);
}

typedef struct {
	job_record_t *job_ptr;
	swasm_job rec;
} pending_t;

/*
 * One pass at `now`, as multifactor's decay thread runs one: Slurm's usage
 * decayed and charged (usage mode), association and QOS changes sent, the
 * component's `calculate` over the running and pending jobs, the new
 * priorities and the sprio rows written back.
 */
static void _pass(time_t now)
{
	slurmctld_lock_t job_write_lock =
		{ NO_LOCK, WRITE_LOCK, READ_LOCK, READ_LOCK, NO_LOCK };
	swasm_error err = SWASM_ERROR_INIT;
	swasm_job_priority_list prios = { 0 };
	swasm_priority_factors_list rows = { 0 };
	swasm_factors_request all = { 0 };
	bool charge = false;
	time_t floor = start_floor_needed ? usage_last_ran() : 0;
	arena_t arena = { 0 };
	swasm_job *running = NULL, *pending_recs = NULL;
	pending_t *pending = NULL;
	uint32_t *pending_ids = NULL;
	size_t n_running = 0, n_pending = 0, cap;
	idmap_t by_id = { 0 };
	job_record_t *job_ptr;
	ListIterator itr;

	uint64_t pass_start = _now_ns(), locked_at, calls_ns;

	pass_number++;
	if (usage_mode) {
		uint16_t reset_period = slurm_conf.priority_reset_period;
		static time_t next_reset;
		if (reset_period == PRIORITY_RESET_NOW) {
			usage_reset();
			slurm_conf.priority_reset_period = PRIORITY_RESET_NONE;
			last_reset = now;
		} else if (reset_period != PRIORITY_RESET_NONE) {
			if (!next_reset)
				next_reset = usage_next_reset(reset_period,
							      last_reset);
			if (now >= next_reset) {
				usage_reset();
				last_reset = next_reset;
				next_reset = usage_next_reset(reset_period,
							      last_reset);
			}
		}
		charge = usage_decay(now);
		charge = charge || usage_fair_tree();
	}
	_sync_tables();

	lock_slurmctld(job_write_lock);
	locked_at = _now_ns();
	site_factor_g_update();
	if (reconfig_pending)
		_reload();
	if (reconfig_pending || records_partitions_changed()) {
		bool assoc_clear = reconfig_assoc_clear;
		reconfig_pending = reconfig_assoc_clear = false;
		/* the running jobs go with assoc_clear, below */
		if (!assoc_clear)
			_reconfigure(false, NULL, 0);
		else
			reconfig_assoc_clear = true;
	}
	cap = list_count(job_list) + 1;
	running = arena_alloc(&arena, cap * sizeof(*running));
	pending = arena_alloc(&arena, cap * sizeof(*pending));
	itr = list_iterator_create(job_list);
	while ((job_ptr = list_next(itr))) {
		idmap_entry_t *known = idmap_find(&known_jobs, job_ptr->job_id);

		/* a job is forgotten once slurmctld purged it (below) */
		if (known)
			known->seen = pass_number;
		if (usage_mode && usage_charged(job_ptr)) {
			if (charge)
				usage_charge(job_ptr, now);
			if (_job(&arena, job_ptr, floor, &running[n_running]))
				n_running++;
		}
		if (IS_JOB_PENDING(job_ptr) && job_ptr->priority &&
		    !IS_JOB_POWER_UP_NODE(job_ptr)) {
			pending_t *p = &pending[n_pending];
			idmap_entry_t *e;
			uint64_t fp;

			if (!_job(&arena, job_ptr, 0, &p->rec))
				continue;
			p->job_ptr = job_ptr;
			fp = records_job_fingerprint(&p->rec);
			e = idmap_get(&known_jobs, job_ptr->job_id);
			if (e->fingerprint != fp) {
				/* new to the component (a restart) or changed
				 * since `set` (accrue time, the scheduler's
				 * CPU estimate, ...): give it the job again */
				uint32_t ignored;
				if (api->swasm_priority_set(plugin, job_ptr->priority,
							    &p->rec, &ignored, &err)) {
					_failed("set", &err);
					idmap_remove(&known_jobs, job_ptr->job_id);
					continue;
				}
				e = idmap_get(&known_jobs, job_ptr->job_id);
				e->fingerprint = fp;
			}
			e->seen = pass_number;
			idmap_get(&by_id, job_ptr->job_id)->data = p;
			n_pending++;
		}
	}
	list_iterator_destroy(itr);

	if (reconfig_assoc_clear) {
		reconfig_assoc_clear = false;
		_reconfigure(true, running, n_running);
	}

	pending_ids = arena_alloc(&arena, (n_pending + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < n_pending; i++)
		pending_ids[i] = pending[i].rec.job_id;
	calls_ns = _now_ns();
	if (api->swasm_priority_calculate(plugin, running, n_running, pending_ids,
					  n_pending, &prios, &err)) {
		_failed("calculate", &err);
	} else {
		time_t update = time(NULL);
		for (size_t i = 0; i < prios.n_items; i++) {
			idmap_entry_t *e = idmap_find(&by_id, prios.items[i].job_id);
			pending_t *p = e ? e->data : NULL;
			job_record_t *j = p ? p->job_ptr :
					 find_job_record(prios.items[i].job_id);
			if (!j || !j->priority || j->direct_set_prio)
				continue;
			j->priority = prios.items[i].priority;
			if (p)
				p->rec.priority = j->priority;
			last_job_update = update;
		}
		api->swasm_job_priority_list_free(&prios);
		start_floor_needed = false;
		if (update != now)
			debug("%s: the pass of %ld ran past its second: the plugin saw %ld",
			      SHIM, (long) now, (long) update);
	}

	/* sprio's rows, as of this pass */
	pending_recs = arena_alloc(&arena, (n_pending + 1) * sizeof(swasm_job));
	for (size_t i = 0; i < n_pending; i++)
		pending_recs[i] = pending[i].rec;
	if (api->swasm_priority_get_priority_factors_list(
		    plugin, pending_recs, n_pending, &all, 0, &rows, &err)) {
		_failed("get-priority-factors-list", &err);
	} else {
		factors_replace_all(&rows);
		api->swasm_priority_factors_list_free(&rows);
		for (size_t i = 0; i < n_pending; i++)
			factors_apply(pending[i].job_ptr);
	}

	calls_ns = _now_ns() - calls_ns;
	/* jobs the component holds that slurmctld purged without job_end
	 * (cancelled while pending, or no limits enforcement) */
	idmap_sweep(&known_jobs, pass_number, _forget, NULL);
	debug("%s: pass at %ld: %zu running and %zu pending jobs, %.3f ms under the job lock (%.3f ms in calculate and get-priority-factors-list); priority_p_set since the last pass: %"PRIu64" calls, %.1f us each",
	      SHIM, (long) now, n_running, n_pending,
	      (_now_ns() - locked_at) / 1e6, calls_ns / 1e6, set_calls,
	      set_calls ? set_ns / 1e3 / set_calls : 0.0);
	set_calls = set_ns = 0;
	unlock_slurmctld(job_write_lock);

	idmap_clear(&by_id, NULL, NULL);
	arena_free(&arena);

	if (usage_mode) {
		char *state = _state_file();
		_write_figures();
		usage_pass_done(now, last_reset);
		if (api->swasm_priority_state_save(plugin, state, &err))
			_failed("state-save", &err);
		xfree(state);
	}
	debug2("%s: pass at %ld took %.3f ms", SHIM, (long) now,
	       (_now_ns() - pass_start) / 1e6);
}

/* Waits until `abs`; false when the plugin is shutting down. */
static bool _sleep_until(struct timespec *abs)
{
	bool go_on;

	slurm_mutex_lock(&pass_lock);
	while (!shutdown_requested &&
	       (pthread_cond_timedwait(&pass_cond, &pass_lock, abs) == 0))
		;
	go_on = !shutdown_requested;
	slurm_mutex_unlock(&pass_lock);
	return go_on;
}

static void *_pass_thread(void *arg)
{
	struct timeval tv;
	struct timespec abs;

#if HAVE_SYS_PRCTL_H
	prctl(PR_SET_NAME, "wasm_decay", NULL, NULL, NULL);
#endif
	slurm_mutex_lock(&pass_init_lock);
	if (usage_mode)
		usage_start(&last_reset);
	if (!last_reset)
		last_reset = time(NULL);
	pass_started = true;
	slurm_cond_signal(&pass_init_cond);
	slurm_mutex_unlock(&pass_init_lock);

	/* passes start 200 ms into a second, so that time() (a coarse clock,
	 * a few ms behind) and the component's clock read the same second */
	gettimeofday(&tv, NULL);
	abs.tv_sec = tv.tv_sec + 1;
	abs.tv_nsec = 200 * 1000 * 1000;
	while (_sleep_until(&abs)) {
		_pass(time(NULL));
		abs.tv_sec += slurm_conf.priority_calc_period;
	}
	return NULL;
}

/* ---- the plugin ---- */

EXPORT extern int init(void)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_plugin_identity id = { 0 };
	swasm_priority_config config;
	swasm_association_usage_list usages = { 0 };
	arena_t arena = { 0 };
	char *state;

	if (!running_in_slurmctld())
		return SLURM_SUCCESS;
	if (plugin)
		return SLURM_SUCCESS;

	if (!(api = swasm_shim_api(SHIM, plugin_type)))
		return SLURM_ERROR;
	if (!(host = swasm_shim_open_host(SHIM, api, slurm_conf.slurm_conf)))
		return SLURM_ERROR;
	if (!(plugin = api->swasm_priority_open(host, NULL, &err)) ||
	    api->swasm_priority_identity(plugin, &id, &err)) {
		error("%s: %s", SHIM, err.message ? err.message : "unknown error");
		api->swasm_error_clear(&err);
		goto fail;
	}
	info("%s: running %s (%s, contract %s)", SHIM, id.plugin_type,
	     id.plugin_name, id.contract_version);
	api->swasm_plugin_identity_free(&id);

	usage_setup();
	site_factor_plugin_init();
	records_config(&arena, &config);
	if (api->swasm_priority_init(plugin, &config, &err)) {
		error("%s: the plugin's init failed: %s", SHIM,
		      err.message ? err.message : "unknown error");
		api->swasm_error_clear(&err);
		arena_free(&arena);
		goto fail;
	}
	arena_free(&arena);

	/* the component's own usage, as it saved it at the last pass */
	state = _state_file();
	start_floor_needed = true;
	if (!api->swasm_priority_state_restore(plugin, state, &err)) {
		start_floor_needed = false;
		info("%s: restored the plugin's state from %s", SHIM, state);
		_adopt_restored_associations();
	} else if (err.code == SWASM_ENOENT) {
		api->swasm_error_clear(&err);
	} else {
		error("%s: the plugin's state in %s is not used, the plugin starts from Slurm's usage: %s",
		      SHIM, state, err.message ? err.message : "unknown error");
		api->swasm_error_clear(&err);
	}
	xfree(state);
	_sync_tables();

	if (api->swasm_priority_association_usages(plugin, &usages, &err)) {
		error("%s: association-usages failed: %s", SHIM,
		      err.message ? err.message : "unknown error");
		api->swasm_error_clear(&err);
		goto fail;
	}
	usage_mode = usages.n_items > 0;
	api->swasm_association_usage_list_free(&usages);

	if (slurm_with_slurmdbd() && assoc_mgr_root_assoc) {
		shutdown_requested = false;
		slurm_mutex_lock(&pass_init_lock);
		slurm_thread_create(&pass_thread, _pass_thread, NULL);
		pass_thread_running = true;
		while (!pass_started)
			slurm_cond_wait(&pass_init_cond, &pass_init_lock);
		slurm_mutex_unlock(&pass_init_lock);
	}
	debug("%s loaded (%s bookkeeping)", plugin_name,
	      usage_mode ? "multifactor's" : "priority/basic's");
	return SLURM_SUCCESS;

fail:
	if (plugin)
		api->swasm_priority_close(plugin);
	plugin = NULL;
	api->swasm_host_close(host);
	host = NULL;
	return SLURM_ERROR;
}

EXPORT extern int fini(void)
{
	swasm_error err = SWASM_ERROR_INIT;

	if (!plugin)
		return SLURM_SUCCESS;
	if (pass_thread_running) {
		slurm_mutex_lock(&pass_lock);
		shutdown_requested = true;
		slurm_cond_broadcast(&pass_cond);
		slurm_mutex_unlock(&pass_lock);
		pthread_join(pass_thread, NULL);
		pass_thread_running = false;
	}
	if (usage_mode) {
		char *state = _state_file();
		if (api->swasm_priority_state_save(plugin, state, &err))
			_failed("state-save", &err);
		xfree(state);
	}
	if (api->swasm_priority_fini(plugin, &err))
		_failed("fini", &err);
	api->swasm_priority_close(plugin);
	api->swasm_host_close(host);
	plugin = NULL;
	host = NULL;
	factors_fini();
	usage_fini();
	site_factor_plugin_fini();
	idmap_clear(&known_jobs, NULL, NULL);
	idmap_clear(&sent_assocs, NULL, NULL);
	idmap_clear(&sent_qos, NULL, NULL);
	return SLURM_SUCCESS;
}

/* priority/basic's rule, when the component cannot answer. */
static uint32_t _basic_priority(uint32_t last_prio, job_record_t *job_ptr)
{
	uint32_t prio = (last_prio >= 2) ? last_prio - 1 : 1;

	if (job_ptr->direct_set_prio && (job_ptr->priority > 1))
		return job_ptr->priority;
	if (job_ptr->details) {
		int offset = (int) job_ptr->details->nice - NICE_OFFSET;
		if ((offset <= 0) || (prio > (uint32_t) (offset + 1)))
			prio -= offset;
	}
	return prio ? prio : 1;
}

/* priority_p_set's work. */
static uint32_t _set(uint32_t last_prio, job_record_t *job_ptr)
{
	swasm_error err = SWASM_ERROR_INIT;
	arena_t arena = { 0 };
	swasm_job rec;
	uint32_t prio;

	if (!plugin)
		return _basic_priority(last_prio, job_ptr);
	site_factor_g_set(job_ptr);
	if (reconfig_pending && (!reconfig_assoc_clear || !pass_thread_running)) {
		/* with assoc_clear the pass gives the running jobs too */
		reconfig_pending = reconfig_assoc_clear = false;
		_reconfigure(false, NULL, 0);
	}
	if (!_job(&arena, job_ptr, 0, &rec)) {
		arena_free(&arena);
		return _basic_priority(last_prio, job_ptr);
	}
	if (api->swasm_priority_set(plugin, last_prio, &rec, &prio, &err)) {
		_failed("set", &err);
		idmap_remove(&known_jobs, job_ptr->job_id);
		arena_free(&arena);
		return _basic_priority(last_prio, job_ptr);
	}
	rec.priority = prio;
	idmap_get(&known_jobs, job_ptr->job_id)->fingerprint =
		records_job_fingerprint(&rec);

	if (pass_thread_running) {
		/* sprio's rows for the job, as multifactor keeps them from
		 * submission to the next pass */
		swasm_priority_factors_list rows = { 0 };
		swasm_factors_request one = { .job_ids = &rec.job_id,
					      .n_job_ids = 1 };
		if (api->swasm_priority_get_priority_factors_list(
			    plugin, &rec, 1, &one, 0, &rows, &err)) {
			_failed("get-priority-factors-list", &err);
		} else {
			factors_replace_job(job_ptr->job_id, &rows);
			api->swasm_priority_factors_list_free(&rows);
			factors_apply(job_ptr);
		}
	}
	arena_free(&arena);
	debug2("%s: initial priority for %pJ is %u", SHIM, job_ptr, prio);
	return prio;
}

/* Called by set_job_prio() with the job write lock held. */
EXPORT extern uint32_t priority_p_set(uint32_t last_prio, job_record_t *job_ptr)
{
	uint64_t start = _now_ns();
	uint32_t prio = _set(last_prio, job_ptr);

	set_ns += _now_ns() - start;
	set_calls++;
	return prio;
}

/*
 * Called with no slurmctld lock held (assoc_clear) or under the
 * configuration write lock: Slurm's bookkeeping now, the component at its
 * next call that holds the job lock (the next pass or priority_p_set).
 */
EXPORT extern void priority_p_reconfig(bool assoc_clear)
{
	if (!plugin)
		return;
	if (usage_mode)
		usage_reconfig(assoc_clear);
	else
		usage_setup();
	site_factor_g_reconfig();
	reconfig_pending = true;
	if (assoc_clear)
		reconfig_assoc_clear = true;
	debug2("%s reconfigured", plugin_name);
}

/* Called by assoc_mgr (sshare, QOS usage thresholds) with its locks held. */
EXPORT extern void priority_p_set_assoc_usage(slurmdb_assoc_rec_t *assoc)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_association_usage u;

	if (!plugin || !assoc || !assoc->usage)
		return;
	if (api->swasm_priority_set_assoc_usage(plugin, assoc->id, &u, &err)) {
		debug("%s: set-assoc-usage of association %u: %s", SHIM,
		      assoc->id, err.message ? err.message : "unknown error");
		api->swasm_error_clear(&err);
		return;
	}
	assoc->usage->usage_norm = u.usage_norm;
	assoc->usage->usage_efctv = u.usage_effective;
}

/*
 * sshare computes the classic fair-share factor of each row itself, through
 * the priority plugin it loads (no library there): multifactor's formula,
 * which also gives priority/basic's answers (no shares: 0).
 */
EXPORT extern double priority_p_calc_fs_factor(long double usage_efctv,
					long double shares_norm)
{
	long double damp = slurm_conf.fs_dampening_factor ?
			   slurm_conf.fs_dampening_factor : 1;

	if (fuzzy_equal(usage_efctv, NO_VAL) || (shares_norm <= 0) ||
	    fuzzy_equal(shares_norm, NO_VAL))
		return 0.0;
	return pow(2.0, -((usage_efctv / shares_norm) / damp));
}

/* sprio: called with no lock held; takes the job read lock itself. */
EXPORT extern List priority_p_get_priority_factors_list(
	priority_factors_request_msg_t *req_msg, uid_t uid)
{
	if (!plugin)
		return NULL;
	return factors_list(req_msg, uid);
}

/* Called by acct_policy with the job write lock held, when limits are
 * enforced. */
EXPORT extern void priority_p_job_end(job_record_t *job_ptr)
{
	swasm_error err = SWASM_ERROR_INIT;
	arena_t arena = { 0 };
	swasm_job rec;

	if (!plugin)
		return;
	if (usage_mode)
		usage_job_end(job_ptr);
	else
		usage_job_end_unused(job_ptr);
	if (_job(&arena, job_ptr, start_floor_needed ? usage_last_ran() : 0,
		 &rec) &&
	    api->swasm_priority_job_end(plugin, &rec, &err))
		_failed("job-end", &err);
	idmap_remove(&known_jobs, job_ptr->job_id);
	arena_free(&arena);
}
