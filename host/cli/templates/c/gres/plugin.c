/*
 * plugin.c - gres/fpga: a count-only GRES (no device files): jobs and steps
 * holding some see SLURM_FPGA_COUNT=<count on this node> (a gres plugin may
 * set SLURM_* and the GPU variables). Every other function keeps its
 * default in defaults.c (records as gres.conf gives them, no devices).
 */
#include "gres_plugin.h"
#include "slurm_plugin.h"
#include "policy.h"

#define PLUGIN_TYPE "gres/fpga"

/* describe(): the plugin's identity. Never fails. */
void exports_gres_plugin_describe(gres_plugin_plugin_identity_t *ret)
{
	slurm_plugin_identity(ret, PLUGIN_TYPE, "FPGA count", NULL, 0);
}

/*
 * The edits for an allocation: COUNT_ENV_KEY set to its count, or none
 * without an allocation (freed here). Fails with SLURM_ERROR when memory
 * runs out.
 */
static bool count_env(exports_slurm_plugin_gres_gres_allocation_t *allocation,
		      exports_slurm_plugin_gres_list_env_change_t *ret,
		      exports_slurm_plugin_gres_plugin_error_t *err)
{
	exports_slurm_plugin_gres_env_change_t *set;
	char value[32];

	ret->ptr = NULL;
	ret->len = 0;
	if (!allocation)
		return true;
	count_env_value(allocation->count, value, sizeof(value));
	exports_slurm_plugin_gres_gres_allocation_free(allocation);
	set = calloc(1, sizeof(*set));
	if (!set)
		return slurm_plugin_fail(err, SLURM_ERROR,
					 PLUGIN_TYPE ": out of memory");
	set->tag = EXPORTS_SLURM_PLUGIN_GRES_ENV_CHANGE_SET;
	gres_plugin_string_dup(&set->val.set.key, COUNT_ENV_KEY);
	gres_plugin_string_dup(&set->val.set.value, value);
	ret->ptr = set;
	ret->len = 1;
	return true;
}

/* job_set_env(): count_env(). */
bool exports_slurm_plugin_gres_job_set_env(
	exports_slurm_plugin_gres_gres_allocation_t *maybe_allocation,
	exports_slurm_plugin_gres_env_flags_t flags,
	exports_slurm_plugin_gres_list_env_change_t *ret,
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	return count_env(maybe_allocation, ret, err);
}

/* step_set_env(): count_env(). */
bool exports_slurm_plugin_gres_step_set_env(
	exports_slurm_plugin_gres_gres_allocation_t *maybe_allocation,
	exports_slurm_plugin_gres_env_flags_t flags,
	exports_slurm_plugin_gres_list_env_change_t *ret,
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	return count_env(maybe_allocation, ret, err);
}
