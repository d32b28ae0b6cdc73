/*
 * plugin.c - task/one_cpu: binds each task to one CPU, the first thread of
 * the step's cores taken in turn by the task's local id. Needs the
 * topology and cpuset capabilities. Every other function keeps its default
 * in defaults.c (task/none's).
 */
#include "task_plugin.h"
#include "slurm_plugin.h"
#include "policy.h"

#define PLUGIN_TYPE "task/one_cpu"

/* describe(): the plugin's identity; the host must grant both capabilities. */
void exports_task_plugin_describe(task_plugin_plugin_identity_t *ret)
{
	static const slurm_plugin_types_capability_t caps[] = {
		SLURM_PLUGIN_TYPES_CAPABILITY_TOPOLOGY,
		SLURM_PLUGIN_TYPES_CAPABILITY_CPUSET,
	};

	slurm_plugin_identity(ret, PLUGIN_TYPE, "one CPU per task", caps, 2);
}

/*
 * Fills err from a capability error and returns false (SLURM_ERROR with the
 * reason, the Rust SDK's wording).
 */
static bool capability_failed(slurm_plugin_types_capability_error_t *why,
			      exports_slurm_plugin_task_plugin_error_t *err)
{
	static const char *names[] = { "log", "clock", "topology", "cpuset",
				       "gpu", "gpu-control" };
	bool ok;

	if (why->tag == SLURM_PLUGIN_TYPES_CAPABILITY_ERROR_DENIED)
		ok = slurm_plugin_fail(err, SLURM_ERROR,
				       "capability %s denied (not granted)",
				       names[why->val.denied % 6]);
	else
		ok = slurm_plugin_fail(err, SLURM_ERROR, "capability %s: %.*s",
				       why->tag == SLURM_PLUGIN_TYPES_CAPABILITY_ERROR_FAILED ?
				       "call failed" : "unavailable",
				       (int) why->val.failed.len,
				       (const char *) why->val.failed.ptr);
	slurm_plugin_types_capability_error_free(why);
	return ok;
}

/*
 * pre_launch_priv(): binds the task to one_cpu_for_task()'s CPU. Does
 * nothing for a step without cores here; fails with SLURM_ERROR when a
 * capability is denied or fails, when the layout has no CPU for the core,
 * or when memory runs out.
 */
bool exports_slurm_plugin_task_pre_launch_priv(
	exports_slurm_plugin_task_step_t *step,
	exports_slurm_plugin_task_task_t *task,
	exports_slurm_plugin_task_plugin_error_t *err)
{
	slurm_plugin_topology_cpu_layout_t layout;
	slurm_plugin_types_capability_error_t why;
	slurm_plugin_types_bitmap_t cpus;
	uint32_t *cores = malloc((step->cores.len ? step->cores.len : 1) *
				 sizeof(*cores));
	size_t ncores = 0;
	int64_t cpu;
	bool ok = true;

	if (!cores) {
		exports_slurm_plugin_task_step_free(step);
		return slurm_plugin_fail(err, SLURM_ERROR,
					 PLUGIN_TYPE ": out of memory");
	}
	for (uint32_t i = 0; i < step->cores.len; i++)
		if (step->cores.words.ptr[i / 64] >> (i % 64) & 1)
			cores[ncores++] = i;
	exports_slurm_plugin_task_step_free(step);
	if (!ncores) {
		free(cores);
		return true; /* a step without cores here: nothing to bind to */
	}
	if (!slurm_plugin_topology_read_layout(&layout, &why)) {
		free(cores);
		return capability_failed(&why, err);
	}
	cpu = one_cpu_for_task(cores, ncores, task->local_id,
			       layout.block_map.ptr, layout.block_map.len,
			       layout.threads_per_core);
	free(cores);
	slurm_plugin_topology_cpu_layout_free(&layout);
	if (cpu < 0)
		return slurm_plugin_fail(err, SLURM_ERROR,
					 PLUGIN_TYPE ": no CPU for task %u",
					 task->local_id);
	cpus.len = cpu + 1;
	cpus.words.len = (cpus.len + 63) / 64;
	cpus.words.ptr = calloc(cpus.words.len, sizeof(uint64_t));
	if (!cpus.words.ptr)
		return slurm_plugin_fail(err, SLURM_ERROR,
					 PLUGIN_TYPE ": out of memory");
	cpus.words.ptr[cpu / 64] |= 1ULL << (cpu % 64);
	if (!slurm_plugin_cpuset_bind(task->pid, &cpus, &why))
		ok = capability_failed(&why, err);
	free(cpus.words.ptr);
	return ok;
}
