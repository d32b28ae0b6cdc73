/*
 * swasm_shim.h: what every slurm-wasm shim plugin shares: finding and
 * dlopen-ing libslurm_wasm.so, the table of its functions, the host
 * configuration's path, and routing the library's logs to Slurm's log.
 *
 * A shim has no DT_NEEDED on the library: Slurm's client commands load
 * plugins too (sshare loads the priority plugin), and they must not map a
 * 20 MB runtime. The library is opened only by the daemon that calls it, with
 * RTLD_NOW|RTLD_LOCAL|RTLD_NODELETE (Slurm dlclose()s a plugin whose init()
 * fails; the library's threads and fork handlers must stay mapped).
 *
 * Where things are found:
 *   - the library: $SLURM_WASM_LIBRARY, else lib/libslurm_wasm.so in the
 *     directory the shim was loaded from (a subdirectory, so that Slurm's
 *     scans of PluginDir never dlopen it);
 *   - the host configuration (TOML): $SLURM_WASM_CONFIG in the daemon's
 *     environment, else slurm-wasm.toml beside the slurm.conf in use.
 *
 * Every failure is logged as one error() line naming the file and what is
 * wrong; the caller then fails its init() and Slurm stops the daemon.
 */
#ifndef SWASM_SHIM_H
#define SWASM_SHIM_H

#include "slurm_wasm.h"

/* The library functions the shims call, resolved with dlsym (every shim
 * resolves them all: one table, one check that the library is whole). */
#define SWASM_SHIM_FUNCS(X)                              \
	X(swasm_abi_version) \
	X(swasm_contract_version) \
	X(swasm_error_clear) \
	X(swasm_host_open) \
	X(swasm_host_close) \
	X(swasm_plugin_identity_free) \
	X(swasm_priority_open) \
	X(swasm_priority_close) \
	X(swasm_priority_load) \
	X(swasm_priority_identity) \
	X(swasm_priority_init) \
	X(swasm_priority_fini) \
	X(swasm_priority_set) \
	X(swasm_priority_reconfig) \
	X(swasm_priority_reload) \
	X(swasm_priority_set_assoc_usage) \
	X(swasm_priority_get_priority_factors_list) \
	X(swasm_priority_factors_list_free) \
	X(swasm_priority_job_end) \
	X(swasm_job_priority_list_free) \
	X(swasm_priority_update_associations) \
	X(swasm_priority_update_qos) \
	X(swasm_priority_calculate) \
	X(swasm_priority_association_usages) \
	X(swasm_association_usage_list_free) \
	X(swasm_priority_state_save) \
	X(swasm_priority_state_restore) \
	X(swasm_task_open) \
	X(swasm_task_close) \
	X(swasm_task_load) \
	X(swasm_task_identity) \
	X(swasm_task_init) \
	X(swasm_task_fini) \
	X(swasm_task_slurmd_batch_request) \
	X(swasm_task_slurmd_launch_request) \
	X(swasm_cpu_binding_free) \
	X(swasm_task_slurmd_suspend_job) \
	X(swasm_task_slurmd_resume_job) \
	X(swasm_task_pre_setuid) \
	X(swasm_task_pre_launch_priv) \
	X(swasm_task_pre_launch) \
	X(swasm_task_post_term) \
	X(swasm_task_post_step) \
	X(swasm_task_add_pid) \
	X(swasm_gres_open) \
	X(swasm_gres_close) \
	X(swasm_gres_load) \
	X(swasm_gres_identity) \
	X(swasm_gres_init) \
	X(swasm_gres_fini) \
	X(swasm_gres_node_config_load) \
	X(swasm_node_config_result_free) \
	X(swasm_gres_job_set_env) \
	X(swasm_gres_step_set_env) \
	X(swasm_gres_task_set_env) \
	X(swasm_env_change_list_free) \
	X(swasm_gres_send_stepd) \
	X(swasm_gres_recv_stepd) \
	X(swasm_gres_job_info) \
	X(swasm_gres_step_info) \
	X(swasm_gres_info_value_free) \
	X(swasm_gres_get_devices) \
	X(swasm_gres_device_list_free) \
	X(swasm_gres_step_hardware_init) \
	X(swasm_gres_step_hardware_fini) \
	X(swasm_gres_epilog_build_env) \
	X(swasm_gres_epilog_set_env) \
	X(swasm_gres_epilog_info_free) \
	X(swasm_gres_step_context) \
	X(swasm_bytes_free) \
	X(swasm_select_open) \
	X(swasm_select_close) \
	X(swasm_select_identity) \
	X(swasm_select_init) \
	X(swasm_select_fini) \
	X(swasm_select_node_init) \
	X(swasm_select_update_node_state) \
	X(swasm_select_job_test) \
	X(swasm_job_test_result_free) \
	X(swasm_select_job_begin) \
	X(swasm_select_set_job_network) \
	X(swasm_select_job_fini) \
	X(swasm_select_job_ready) \
	X(swasm_select_step_start) \
	X(swasm_select_step_avail_nodes) \
	X(swasm_select_step_finish) \
	X(swasm_bitmap_free) \
	X(swasm_select_job_suspend) \
	X(swasm_select_job_resume) \
	X(swasm_select_job_resized) \
	X(swasm_select_job_expand) \
	X(swasm_job_resources_free) \
	X(swasm_select_reconfigure) \
	X(swasm_select_reload) \
	X(swasm_select_get_info_from_plugin) \
	X(swasm_plugin_info_value_free) \
	X(swasm_select_resv_test) \
	X(swasm_reservation_result_free) \
	X(swasm_select_nodeinfo_set_all) \
	X(swasm_select_node_nodeinfo) \
	X(swasm_select_nodeinfo_get) \
	X(swasm_nodeinfo_value_free) \
	X(swasm_select_nodeinfo_free)

typedef struct {
#define SWASM_SHIM_FIELD(f) __typeof__(&f) f;
	SWASM_SHIM_FUNCS(SWASM_SHIM_FIELD)
#undef SWASM_SHIM_FIELD
} swasm_api_t;

/*
 * Opens libslurm_wasm.so (once per process) and resolves every function,
 * checking that the library speaks this header's SWASM_ABI_VERSION.
 * `shim` names the plugin in log lines ("priority/wasm"); `self` is any
 * symbol of the calling shim, to find its directory. Returns the table, or
 * NULL after logging why.
 */
extern const swasm_api_t *swasm_shim_api(const char *shim, const void *self);

/*
 * The host configuration file to open: $SLURM_WASM_CONFIG, else
 * slurm-wasm.toml beside `slurm_conf_path` (NULL: Slurm's default). An
 * xmalloc'ed string.
 */
extern char *swasm_shim_config_path(const char *slurm_conf_path);

/*
 * Opens the host described by swasm_shim_config_path() with logs routed to
 * Slurm's log at the daemon's current level. Returns NULL after logging why.
 */
extern swasm_host *swasm_shim_open_host(const char *shim, const swasm_api_t *api,
					const char *slurm_conf_path);

/* The log callback given to swasm_host_open: ctx is the shim's name. */
extern void swasm_shim_log(void *ctx, swasm_log_level level, const char *message);

/*
 * While set on the calling thread, the plugin's info-level lines logged by
 * that thread's library calls are also given to `fn` (without the
 * "slurm-wasm: <plugin>: " prefix), besides going to the log. NULL ends the
 * capture. The task shim prints a verbose step's binding report with it.
 */
typedef void (*swasm_shim_capture_fn)(const char *line, void *arg);
extern void swasm_shim_capture(swasm_shim_capture_fn fn, void *arg);

#endif
