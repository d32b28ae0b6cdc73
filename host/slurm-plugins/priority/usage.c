/*
 * usage.c: Slurm's own usage bookkeeping, as priority/multifactor keeps it,
 * for the priority/wasm shim.
 *
 * The policy (priorities, fair-share) is the WebAssembly plugin's. What Slurm
 * itself reads back from the priority plugin's work is kept here by Slurm's
 * own code, compiled from the fetched source tree (SLURM_SRC) at build time
 * rather than copied: assoc_mgr's usage_raw, usage_tres_raw and grp_used_wall
 * (decayed and charged every pass; `sshare`'s RawUsage), the
 * grp_used_tres_run_secs of associations and QOS (GrpTRESRunMins limits and
 * sshare's TRESRunMins), QOS usage, and StateSaveLocation/
 * priority_last_decay_ran. The multifactor plugin's exported names are
 * renamed so that they do not clash with the shim's; its decay thread and
 * priority functions are compiled but never called.
 */
#define plugin_name swasm_mf_plugin_name
#define plugin_type swasm_mf_plugin_type
#define plugin_version swasm_mf_plugin_version
#define init swasm_mf_init
#define fini swasm_mf_fini
#define priority_p_set swasm_mf_priority_p_set
#define priority_p_reconfig swasm_mf_priority_p_reconfig
#define priority_p_set_assoc_usage swasm_mf_priority_p_set_assoc_usage
#define priority_p_calc_fs_factor swasm_mf_priority_p_calc_fs_factor
#define priority_p_get_priority_factors_list swasm_mf_priority_p_get_priority_factors_list
#define priority_p_job_end swasm_mf_priority_p_job_end
#define decay_apply_new_usage swasm_mf_decay_apply_new_usage
#define decay_apply_weighted_factors swasm_mf_decay_apply_weighted_factors
#define set_assoc_usage_norm swasm_mf_set_assoc_usage_norm
#define set_priority_factors swasm_mf_set_priority_factors
#define fair_tree_decay swasm_mf_fair_tree_decay

/* Default visibility: the globals multifactor defines for the clients
 * (job_list, slurm_conf, ...) must stay interposable by slurmctld's own. */
#pragma GCC visibility push(default)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-variable"
#include "src/plugins/priority/multifactor/priority_multifactor.c"
#include "src/plugins/priority/multifactor/fair_tree.c"
#pragma GCC diagnostic pop
#pragma GCC visibility pop

#include "usage.h"

extern void usage_setup(void)
{
	double decay_hl = (double) slurm_conf.priority_decay_hl;

	_internal_setup();
	decay_factor = (decay_hl > 0) ? 1 - (0.693 / decay_hl) : 1;
}

extern void usage_start(time_t *last_reset)
{
	_read_last_decay_ran(&g_last_ran, last_reset);
	_init_grp_used_tres_run_secs(g_last_ran);
}

extern time_t usage_last_ran(void)
{
	return g_last_ran;
}

extern bool usage_fair_tree(void)
{
	return flags & PRIORITY_FLAGS_FAIR_TREE;
}

extern const double *usage_tres_weights(void)
{
	return weight_tres;
}

extern void usage_reset(void)
{
	_reset_usage();
}

extern time_t usage_next_reset(uint16_t reset_period, time_t last_reset)
{
	return _next_reset(reset_period, last_reset);
}

extern bool usage_decay(time_t now)
{
	double run_delta, real_decay;

	if (!g_last_ran)
		return false;
	run_delta = difftime(now, g_last_ran);
	if (run_delta <= 0)
		return false;
	real_decay = pow(decay_factor, run_delta);
	if (real_decay < DBL_MIN)
		real_decay = DBL_MIN;
	log_flag(PRIO, "Decay factor over %g seconds goes from %.15f -> %.15f",
		 run_delta, decay_factor, real_decay);
	if (_apply_decay(real_decay) != SLURM_SUCCESS)
		error("priority/wasm: problem applying decay");
	return true;
}

extern bool usage_charged(job_record_t *job_ptr)
{
	if (IS_JOB_FINISHED(job_ptr) || IS_JOB_COMPLETING(job_ptr))
		return false;
	return ((flags & PRIORITY_FLAGS_CALCULATE_RUNNING) ||
		!IS_JOB_PENDING(job_ptr)) &&
	       !IS_JOB_POWER_UP_NODE(job_ptr) && job_ptr->start_time &&
	       job_ptr->assoc_ptr && (job_ptr->end_time_exp != (time_t) NO_VAL);
}

extern void usage_charge(job_record_t *job_ptr, time_t now)
{
	(void) swasm_mf_decay_apply_new_usage(job_ptr, &now);
}

extern void usage_pass_done(time_t now, time_t last_reset)
{
	g_last_ran = now;
	_write_last_decay_ran(g_last_ran, last_reset);
}

extern void usage_job_end(job_record_t *job_ptr)
{
	log_flag(PRIO, "%s: called for job %u", __func__, job_ptr->job_id);
	_apply_new_usage(job_ptr, g_last_ran, time(NULL), 1);
}

extern void usage_job_end_unused(job_record_t *job_ptr)
{
	uint64_t time_limit_secs = (uint64_t) job_ptr->time_limit * 60;
	uint64_t unused[slurmctld_tres_cnt];
	assoc_mgr_lock_t locks = { .assoc = WRITE_LOCK, .qos = WRITE_LOCK,
				   .tres = READ_LOCK };

	memset(unused, 0, sizeof(unused));
	for (int i = 0; i < slurmctld_tres_cnt; i++) {
		if (!job_ptr->tres_alloc_cnt ||
		    (job_ptr->tres_alloc_cnt[i] == NO_CONSUME_VAL64))
			continue;
		unused[i] = job_ptr->tres_alloc_cnt[i] * time_limit_secs;
	}
	assoc_mgr_lock(&locks);
	_handle_tres_run_secs(unused, job_ptr);
	assoc_mgr_unlock(&locks);
}

extern void usage_reconfig(bool assoc_clear)
{
	assoc_mgr_lock_t locks = { .assoc = WRITE_LOCK };
	bool was_fair_tree = flags & PRIORITY_FLAGS_FAIR_TREE;

	usage_setup();
	if (was_fair_tree != !!(slurm_conf.priority_flags &
				PRIORITY_FLAGS_FAIR_TREE) &&
	    assoc_mgr_root_assoc) {
		assoc_mgr_lock(&locks);
		_set_norm_shares(assoc_mgr_root_assoc->usage->children_list);
		assoc_mgr_unlock(&locks);
	}
	if (assoc_clear)
		_init_grp_used_tres_run_secs(g_last_ran);
}

extern void usage_fini(void)
{
	xfree(weight_tres);
}
