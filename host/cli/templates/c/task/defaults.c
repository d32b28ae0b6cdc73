/*
 * defaults.c - the task contract's functions a simple policy does not
 * need, with the defaults of Slurm's task/none
 * (src/plugins/task/none/task_none.c) and of the Rust SDK's task::Plugin:
 * requests keep the binding they asked for, every hook succeeds doing
 * nothing.
 *
 * Each is a weak definition: write the same function in plugin.c and the
 * linker takes yours. Each frees the arguments it owns (the bindings'
 * rule) and never fails.
 */
#include "task_plugin.h"
#include "slurm_plugin.h"

#define DEFAULT __attribute__((weak))

/*
 * Fills *ret with the binding cpu_bind_type and cpu_bind (copied), no
 * messages, no environment: task/none's answer to a request.
 */
static void as_requested(exports_slurm_plugin_task_cpu_binding_t *ret,
			 uint32_t cpu_bind_type, const task_plugin_string_t *cpu_bind)
{
	memset(ret, 0, sizeof(*ret));
	ret->cpu_bind_type = cpu_bind_type;
	task_plugin_string_dup_n(&ret->cpu_bind, (const char *) cpu_bind->ptr,
				 cpu_bind->len);
}

/* slurmd_batch_request(): the batch script's binding, as requested. */
DEFAULT bool exports_slurm_plugin_task_slurmd_batch_request(
	exports_slurm_plugin_task_batch_request_t *request,
	exports_slurm_plugin_task_cpu_binding_t *ret,
	exports_slurm_plugin_task_plugin_error_t *err)
{
	as_requested(ret, request->cpu_bind_type, &request->cpu_bind);
	exports_slurm_plugin_task_batch_request_free(request);
	return true;
}

/* slurmd_launch_request(): a step's binding on this node, as requested. */
DEFAULT bool exports_slurm_plugin_task_slurmd_launch_request(
	exports_slurm_plugin_task_launch_request_t *request,
	exports_slurm_plugin_task_cpu_binding_t *ret,
	exports_slurm_plugin_task_plugin_error_t *err)
{
	as_requested(ret, request->cpu_bind_type, &request->cpu_bind);
	exports_slurm_plugin_task_launch_request_free(request);
	return true;
}

/* slurmd_reserve_resources(): nothing. */
DEFAULT bool exports_slurm_plugin_task_slurmd_reserve_resources(
	exports_slurm_plugin_task_launch_request_t *request,
	exports_slurm_plugin_task_plugin_error_t *err)
{
	exports_slurm_plugin_task_launch_request_free(request);
	return true;
}

/* slurmd_suspend_job(): nothing. */
DEFAULT bool exports_slurm_plugin_task_slurmd_suspend_job(
	uint32_t job_id, exports_slurm_plugin_task_plugin_error_t *err)
{
	return true;
}

/* slurmd_resume_job(): nothing. */
DEFAULT bool exports_slurm_plugin_task_slurmd_resume_job(
	uint32_t job_id, exports_slurm_plugin_task_plugin_error_t *err)
{
	return true;
}

/* slurmd_release_resources(): nothing. */
DEFAULT bool exports_slurm_plugin_task_slurmd_release_resources(
	uint32_t job_id, exports_slurm_plugin_task_plugin_error_t *err)
{
	return true;
}

/* pre_setuid(): nothing. */
DEFAULT bool exports_slurm_plugin_task_pre_setuid(
	exports_slurm_plugin_task_step_t *step,
	exports_slurm_plugin_task_plugin_error_t *err)
{
	exports_slurm_plugin_task_step_free(step);
	return true;
}

/* pre_launch_priv(): nothing (where a binding plugin binds each task). */
DEFAULT bool exports_slurm_plugin_task_pre_launch_priv(
	exports_slurm_plugin_task_step_t *step,
	exports_slurm_plugin_task_task_t *task,
	exports_slurm_plugin_task_plugin_error_t *err)
{
	exports_slurm_plugin_task_step_free(step);
	return true;
}

/* pre_launch(): nothing. */
DEFAULT bool exports_slurm_plugin_task_pre_launch(
	exports_slurm_plugin_task_step_t *step,
	exports_slurm_plugin_task_task_t *task,
	exports_slurm_plugin_task_plugin_error_t *err)
{
	exports_slurm_plugin_task_step_free(step);
	return true;
}

/* post_term(): nothing. */
DEFAULT bool exports_slurm_plugin_task_post_term(
	exports_slurm_plugin_task_step_t *step,
	exports_slurm_plugin_task_task_t *task,
	exports_slurm_plugin_task_plugin_error_t *err)
{
	exports_slurm_plugin_task_step_free(step);
	return true;
}

/* post_step(): nothing. */
DEFAULT bool exports_slurm_plugin_task_post_step(
	exports_slurm_plugin_task_step_t *step,
	exports_slurm_plugin_task_plugin_error_t *err)
{
	exports_slurm_plugin_task_step_free(step);
	return true;
}

/* add_pid(): nothing. */
DEFAULT bool exports_slurm_plugin_task_add_pid(
	uint32_t pid, exports_slurm_plugin_task_plugin_error_t *err)
{
	return true;
}

/* update_mem_limit(): nothing. */
DEFAULT bool exports_slurm_plugin_task_update_mem_limit(
	exports_slurm_plugin_task_step_t *step, uint64_t job_mem,
	uint64_t step_mem, exports_slurm_plugin_task_plugin_error_t *err)
{
	exports_slurm_plugin_task_step_free(step);
	return true;
}

/* init(): nothing to set up (task/none's init). */
DEFAULT bool exports_slurm_plugin_task_init(
	exports_slurm_plugin_task_task_config_t *config,
	exports_slurm_plugin_task_plugin_error_t *err)
{
	exports_slurm_plugin_task_task_config_free(config);
	return true;
}

/* fini(): nothing. */
DEFAULT bool exports_slurm_plugin_task_fini(
	exports_slurm_plugin_task_plugin_error_t *err)
{
	return true;
}
