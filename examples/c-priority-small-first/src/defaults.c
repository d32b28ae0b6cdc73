/*
 * defaults.c - the priority contract's functions a simple policy does not
 * need, with the defaults of Slurm's priority/basic
 * (src/plugins/priority/basic/priority_basic.c) and of the Rust SDK's
 * priority::Plugin: priorities are computed at submission only, no usage
 * is kept, there is no state to save.
 *
 * Each is a weak definition: write the same function in plugin.c and the
 * linker takes yours. Each frees the arguments it owns (the bindings'
 * rule) and never fails, except state_restore refusing bytes it did not
 * write.
 */
#include "priority_plugin.h"
#include "slurm_plugin.h"

#define DEFAULT __attribute__((weak))

/*
 * reconfig(): the configuration changed. Nothing to rebuild, as
 * priority/basic's priority_p_reconfig.
 */
DEFAULT bool exports_slurm_plugin_priority_reconfig(
	exports_slurm_plugin_priority_priority_config_t *config,
	bool assoc_clear, exports_slurm_plugin_priority_list_job_t *running,
	exports_slurm_plugin_priority_plugin_error_t *err)
{
	exports_slurm_plugin_priority_priority_config_free(config);
	exports_slurm_plugin_priority_list_job_free(running);
	return true;
}

/*
 * set_assoc_usage(): sshare's figures of one association: zeros, the
 * figures of a plugin that keeps no usage.
 */
DEFAULT bool exports_slurm_plugin_priority_set_assoc_usage(
	uint32_t assoc_id, exports_slurm_plugin_priority_association_usage_t *ret,
	exports_slurm_plugin_priority_plugin_error_t *err)
{
	memset(ret, 0, sizeof(*ret));
	ret->id = assoc_id;
	ret->level_fs.is_some = false;
	return true;
}

/*
 * get_priority_factors_list(): sprio's rows: none, as priority/basic
 * (whose sprio has nothing to show).
 */
DEFAULT bool exports_slurm_plugin_priority_get_priority_factors_list(
	exports_slurm_plugin_priority_list_job_t *jobs,
	exports_slurm_plugin_priority_factors_request_t *request, uint32_t uid,
	exports_slurm_plugin_priority_list_priority_factors_t *ret,
	exports_slurm_plugin_priority_plugin_error_t *err)
{
	exports_slurm_plugin_priority_list_job_free(jobs);
	exports_slurm_plugin_priority_factors_request_free(request);
	ret->ptr = NULL;
	ret->len = 0;
	return true;
}

/* job_end(): no usage to charge. */
DEFAULT bool exports_slurm_plugin_priority_job_end(
	exports_slurm_plugin_priority_job_t *job,
	exports_slurm_plugin_priority_plugin_error_t *err)
{
	exports_slurm_plugin_priority_job_free(job);
	return true;
}

/* recover(): nothing to add to the lowest priority, no new priorities. */
DEFAULT bool exports_slurm_plugin_priority_recover(
	uint32_t boost, exports_slurm_plugin_priority_list_job_t *jobs,
	priority_plugin_tuple2_u32_list_tuple2_u32_u32_t *ret,
	exports_slurm_plugin_priority_plugin_error_t *err)
{
	exports_slurm_plugin_priority_list_job_free(jobs);
	ret->f0 = 0;
	ret->f1.ptr = NULL;
	ret->f1.len = 0;
	return true;
}

/* update_associations(): ignored (a plugin that reads no association). */
DEFAULT bool exports_slurm_plugin_priority_update_associations(
	exports_slurm_plugin_priority_list_association_update_t *updates,
	exports_slurm_plugin_priority_plugin_error_t *err)
{
	exports_slurm_plugin_priority_list_association_update_free(updates);
	return true;
}

/* update_qos(): ignored. */
DEFAULT bool exports_slurm_plugin_priority_update_qos(
	exports_slurm_plugin_priority_list_qos_update_t *updates,
	exports_slurm_plugin_priority_plugin_error_t *err)
{
	exports_slurm_plugin_priority_list_qos_update_free(updates);
	return true;
}

/*
 * calculate(): the periodic pass: no new priorities, so they stay what
 * set() gave (priority/basic has no such pass).
 */
DEFAULT bool exports_slurm_plugin_priority_calculate(
	exports_slurm_plugin_priority_list_job_t *running,
	priority_plugin_list_u32_t *pending,
	priority_plugin_list_tuple2_u32_u32_t *ret,
	exports_slurm_plugin_priority_plugin_error_t *err)
{
	exports_slurm_plugin_priority_list_job_free(running);
	priority_plugin_list_u32_free(pending);
	ret->ptr = NULL;
	ret->len = 0;
	return true;
}

/* association_usages(): empty (the controller keeps basic's bookkeeping). */
DEFAULT bool exports_slurm_plugin_priority_association_usages(
	exports_slurm_plugin_priority_list_association_usage_t *ret,
	exports_slurm_plugin_priority_plugin_error_t *err)
{
	ret->ptr = NULL;
	ret->len = 0;
	return true;
}

/* state_save(): nothing to keep (no bytes). */
DEFAULT bool exports_slurm_plugin_priority_state_save(
	priority_plugin_list_u8_t *ret,
	exports_slurm_plugin_priority_plugin_error_t *err)
{
	ret->ptr = NULL;
	ret->len = 0;
	return true;
}

/*
 * state_restore(): accepts the empty state state_save() writes; refuses
 * anything else with EINVAL, applying nothing.
 */
DEFAULT bool exports_slurm_plugin_priority_state_restore(
	priority_plugin_list_u8_t *data,
	exports_slurm_plugin_priority_plugin_error_t *err)
{
	size_t len = data->len;

	priority_plugin_list_u8_free(data);
	if (len)
		return slurm_plugin_fail(err, EINVAL,
					 "keeps no state, refusing %zu bytes",
					 len);
	return true;
}
