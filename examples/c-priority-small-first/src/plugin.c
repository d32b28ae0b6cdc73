/*
 * plugin.c - priority/small_first: small jobs first, weighted by the
 * partition's PriorityJobFactor. Priorities are set at submission; every
 * other function keeps its default in defaults.c (priority/basic's).
 */
#include "priority_plugin.h"
#include "slurm_plugin.h"
#include "policy.h"

#define PLUGIN_TYPE "priority/small_first"

/* PriorityJobFactor by partition index, from init(); NULL before it. */
static uint32_t *job_factor;
static size_t partition_count;
static bool initialised;

/* describe(): the plugin's identity. Never fails. */
void exports_priority_plugin_describe(priority_plugin_plugin_identity_t *ret)
{
	slurm_plugin_identity(ret, PLUGIN_TYPE, "small jobs first, by partition",
			      NULL, 0);
}

/*
 * init(): keeps each partition's PriorityJobFactor. Fails with
 * SLURM_ERROR when memory runs out.
 */
bool exports_slurm_plugin_priority_init(
	exports_slurm_plugin_priority_priority_config_t *config,
	exports_slurm_plugin_priority_plugin_error_t *err)
{
	size_t n = config->partitions.len;

	free(job_factor);
	job_factor = calloc(n ? n : 1, sizeof(*job_factor));
	if (!job_factor) {
		exports_slurm_plugin_priority_priority_config_free(config);
		return slurm_plugin_fail(err, SLURM_ERROR,
					 PLUGIN_TYPE ": out of memory");
	}
	for (size_t i = 0; i < n; i++)
		job_factor[i] = config->partitions.ptr[i].priority_job_factor;
	partition_count = n;
	initialised = true;
	exports_slurm_plugin_priority_priority_config_free(config);
	return true;
}

/* fini(): forgets the partitions. Never fails. */
bool exports_slurm_plugin_priority_fini(
	exports_slurm_plugin_priority_plugin_error_t *err)
{
	free(job_factor);
	job_factor = NULL;
	partition_count = 0;
	initialised = false;
	return true;
}

/*
 * set(): the job's priority by small_first_priority() in its first
 * partition. A directly set priority is kept, as priority_p_set of
 * priority/basic returns job_ptr->priority when direct_set_prio is set.
 * Fails with SLURM_ERROR before init().
 */
bool exports_slurm_plugin_priority_set(uint32_t last_prio,
				       exports_slurm_plugin_priority_job_t *job,
				       uint32_t *ret,
				       exports_slurm_plugin_priority_plugin_error_t *err)
{
	uint32_t factor = 1;

	if (!initialised) {
		exports_slurm_plugin_priority_job_free(job);
		return slurm_plugin_fail(err, SLURM_ERROR,
					 PLUGIN_TYPE ": called before init");
	}
	if (job->partitions.len && job->partitions.ptr[0] < partition_count)
		factor = job_factor[job->partitions.ptr[0]];
	if (job->direct_set_priority)
		*ret = job->priority;
	else
		*ret = small_first_priority(job->details.min_cpus, factor);
	exports_slurm_plugin_priority_job_free(job);
	return true;
}
