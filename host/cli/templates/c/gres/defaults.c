/*
 * defaults.c - the gres contract's functions a simple policy does not
 * need, with the defaults of a GRES without devices or environment (a
 * count-only GRES such as Slurm's gres/nic) and of the Rust SDK's
 * gres::Plugin: gres.conf records kept as given, no environment, no
 * devices, nothing passed to slurmstepd, job-info and step-info answered
 * from the allocation, no epilog environment.
 *
 * Each function is a weak definition: write the same function in plugin.c
 * and the linker takes yours. Each frees the arguments it owns (the
 * bindings' rule). A plugin that keeps an epilog environment defines
 * struct exports_slurm_plugin_gres_epilog_info_t itself and removes the one
 * below.
 */
#include "gres_plugin.h"
#include "slurm_plugin.h"

#define DEFAULT __attribute__((weak))

/* What epilog_build_env() keeps: nothing (it never makes one). */
struct exports_slurm_plugin_gres_epilog_info_t {
	uint32_t unused;
};

/* init(): nothing to set up. */
DEFAULT bool exports_slurm_plugin_gres_init(
	exports_slurm_plugin_gres_gres_config_t *config,
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	exports_slurm_plugin_gres_gres_config_free(config);
	return true;
}

/* fini(): nothing. */
DEFAULT bool exports_slurm_plugin_gres_fini(
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	return true;
}

/* node_config_load(): the node's gres.conf records as given, no warnings. */
DEFAULT bool exports_slurm_plugin_gres_node_config_load(
	exports_slurm_plugin_gres_list_gres_conf_record_t *records,
	exports_slurm_plugin_gres_node_hardware_t *node,
	exports_slurm_plugin_gres_node_config_result_t *ret,
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	memset(ret, 0, sizeof(*ret));
	ret->records = *records; /* moved: the bindings free it from ret */
	exports_slurm_plugin_gres_node_hardware_free(node);
	return true;
}

/* Frees an optional allocation argument and answers no environment edit. */
#define NO_ENV(maybe, free_fn)				\
	do {						\
		if (maybe)				\
			free_fn(maybe);			\
		ret->ptr = NULL;			\
		ret->len = 0;				\
		return true;				\
	} while (0)

/* job_set_env(): no change. */
DEFAULT bool exports_slurm_plugin_gres_job_set_env(
	exports_slurm_plugin_gres_gres_allocation_t *maybe_allocation,
	exports_slurm_plugin_gres_env_flags_t flags,
	exports_slurm_plugin_gres_list_env_change_t *ret,
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	NO_ENV(maybe_allocation, exports_slurm_plugin_gres_gres_allocation_free);
}

/* step_set_env(): no change. */
DEFAULT bool exports_slurm_plugin_gres_step_set_env(
	exports_slurm_plugin_gres_gres_allocation_t *maybe_allocation,
	exports_slurm_plugin_gres_env_flags_t flags,
	exports_slurm_plugin_gres_list_env_change_t *ret,
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	NO_ENV(maybe_allocation, exports_slurm_plugin_gres_gres_allocation_free);
}

/* task_set_env(): no change. */
DEFAULT bool exports_slurm_plugin_gres_task_set_env(
	exports_slurm_plugin_gres_node_allocation_t *maybe_allocation,
	exports_slurm_plugin_gres_env_flags_t flags,
	exports_slurm_plugin_gres_list_env_change_t *ret,
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	NO_ENV(maybe_allocation, exports_slurm_plugin_gres_node_allocation_free);
}

/* send_stepd(): nothing for slurmstepd. */
DEFAULT bool exports_slurm_plugin_gres_send_stepd(
	gres_plugin_list_u8_t *ret, exports_slurm_plugin_gres_plugin_error_t *err)
{
	ret->ptr = NULL;
	ret->len = 0;
	return true;
}

/* recv_stepd(): ignored. */
DEFAULT bool exports_slurm_plugin_gres_recv_stepd(
	gres_plugin_list_u8_t *data, exports_slurm_plugin_gres_plugin_error_t *err)
{
	gres_plugin_list_u8_free(data);
	return true;
}

/*
 * The allocated count, or its device bitmap, as gres_get_job_info and
 * gres_get_step_info of Slurm's gres.c read the allocation alone. Fails
 * with EINVAL for an allocation without a device bitmap, or one whose
 * words do not match its length (the contract's bitmap rule).
 */
static bool allocation_info(exports_slurm_plugin_gres_gres_allocation_t *allocation,
			    exports_slurm_plugin_gres_info_field_t field,
			    exports_slurm_plugin_gres_info_value_t *ret,
			    exports_slurm_plugin_gres_plugin_error_t *err)
{
	slurm_plugin_types_bitmap_t *map = &allocation->devices.val;
	bool ok = true;

	if (field == EXPORTS_SLURM_PLUGIN_GRES_INFO_FIELD_COUNT) {
		ret->tag = EXPORTS_SLURM_PLUGIN_GRES_INFO_VALUE_COUNT;
		ret->val.count = allocation->count;
	} else if (!allocation->devices.is_some) {
		ok = slurm_plugin_fail(err, EINVAL,
				       "gres/%.*s allocation has no device bitmap",
				       (int) allocation->name.len,
				       (const char *) allocation->name.ptr);
	} else if (map->words.len != (map->len + 63) / 64 ||
		   (map->len % 64 && map->words.ptr[map->words.len - 1] >>
		    (map->len % 64))) {
		ok = slurm_plugin_fail(err, EINVAL,
				       "gres allocation devices: %u bits in %zu words",
				       map->len, map->words.len);
	} else {
		ret->tag = EXPORTS_SLURM_PLUGIN_GRES_INFO_VALUE_DEVICES;
		ret->val.devices = *map; /* moved: the bindings free it from ret */
		allocation->devices.is_some = false;
	}
	exports_slurm_plugin_gres_gres_allocation_free(allocation);
	return ok;
}

/* job_info(): allocation_info(). */
DEFAULT bool exports_slurm_plugin_gres_job_info(
	exports_slurm_plugin_gres_gres_allocation_t *allocation,
	exports_slurm_plugin_gres_info_field_t field,
	exports_slurm_plugin_gres_info_value_t *ret,
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	return allocation_info(allocation, field, ret, err);
}

/* step_info(): allocation_info(). */
DEFAULT bool exports_slurm_plugin_gres_step_info(
	exports_slurm_plugin_gres_gres_allocation_t *allocation,
	exports_slurm_plugin_gres_info_field_t field,
	exports_slurm_plugin_gres_info_value_t *ret,
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	return allocation_info(allocation, field, ret, err);
}

/* get_devices(): none. */
DEFAULT bool exports_slurm_plugin_gres_get_devices(
	exports_slurm_plugin_gres_list_device_t *ret,
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	ret->ptr = NULL;
	ret->len = 0;
	return true;
}

/* step_hardware_init(): nothing (no clocks to set). */
DEFAULT bool exports_slurm_plugin_gres_step_hardware_init(
	exports_slurm_plugin_gres_bitmap_t *maybe_usable,
	gres_plugin_string_t *maybe_tres_freq,
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	if (maybe_usable)
		exports_slurm_plugin_gres_bitmap_free(maybe_usable);
	if (maybe_tres_freq)
		gres_plugin_string_free(maybe_tres_freq);
	return true;
}

/* step_hardware_fini(): nothing. */
DEFAULT bool exports_slurm_plugin_gres_step_hardware_fini(
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	return true;
}

/* epilog_build_env(): no epilog environment. */
DEFAULT bool exports_slurm_plugin_gres_epilog_build_env(
	exports_slurm_plugin_gres_job_t *job,
	exports_slurm_plugin_gres_option_own_epilog_info_t *ret,
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	exports_slurm_plugin_gres_job_free(job);
	ret->is_some = false;
	return true;
}

/*
 * The epilog-info resource's set_env(): never reached, since the default
 * epilog_build_env() makes none; answers no edit.
 */
DEFAULT bool exports_slurm_plugin_gres_method_epilog_info_set_env(
	exports_slurm_plugin_gres_borrow_epilog_info_t self, uint32_t node_index,
	exports_slurm_plugin_gres_list_env_change_t *ret,
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	ret->ptr = NULL;
	ret->len = 0;
	return true;
}

/* The epilog-info resource's destructor. */
DEFAULT void exports_slurm_plugin_gres_epilog_info_destructor(
	exports_slurm_plugin_gres_epilog_info_t *rep)
{
	free(rep);
}

/* step_context(): ignored. */
DEFAULT bool exports_slurm_plugin_gres_step_context(
	exports_slurm_plugin_gres_step_t *step,
	exports_slurm_plugin_gres_plugin_error_t *err)
{
	exports_slurm_plugin_gres_step_free(step);
	return true;
}
