/*
 * gres_wasm.c: replacement gres_gpu.so and gres_mps.so for Slurm 22.05 (one
 * source, built twice with SWASM_GRES_NAME "gpu" or "mps"): every function of
 * the gres plugin API (the `syms` of src/common/gres.c's _load_plugin) runs
 * in a sandboxed WebAssembly gres component (gres_gpu.wasm, gres_mps.wasm or
 * a site's own) through libslurm_wasm.so.
 *
 * Slurm finds a gres plugin by its GRES name, so these files shadow Debian's:
 * they are installed in a PluginDir entry before Debian's. If a shadowing
 * plugin's init() failed, Slurm would silently load Debian's copy from the
 * next entry (src/common/plugin.c, plugin_load_and_link), so every failure
 * to start is fatal(): one error line naming the file and what is wrong,
 * then the daemon stops. It never runs with another gres plugin than the
 * one configured.
 *
 * Where it runs (gres.c loads gres plugins only in daemons: slurmd's
 * node_config_load, slurmctld's node registration and CLOUD nodes,
 * slurmstepd's receipt of slurmd's context; clients never load them):
 *   - slurmd: node_config_load (in _slurmd_init, before it daemonizes),
 *     send_stepd, epilog_set_env;
 *   - slurmctld: epilog_build_env, node_config_load for CLOUD nodes;
 *   - slurmstepd: recv_stepd, job_set_env, step_set_env, get_devices,
 *     step_hardware_init/fini; task_set_env in the forked task.
 * In those processes init() opens the library, the host configuration
 * (common/swasm_shim.h) and the slot [plugins.gres.<name>], all cheap
 * (nothing compiled, no thread started). The component is loaded and given
 * its init at the first call in slurmd (never in init(), which runs before
 * slurmd daemonizes), at init() in slurmctld and slurmstepd (which do not
 * fork a daemon afterwards). In any other process the library is never
 * opened and the plugin behaves as one with no devices.
 *
 * Calls that fail after the component started (a fault the host's failure
 * policy has already handled, an invalid answer) are logged naming the
 * function; an environment call then leaves the environment as it was, a
 * node_config_load failure is fatal as it is in Debian's gres/gpu.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "slurm/slurm_errno.h"
#include "src/common/bitstring.h"
#include "src/common/gres.h"
#include "src/common/log.h"
#include "src/common/pack.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "swasm_shim.h"

#include "records.h"

#ifndef SWASM_GRES_NAME
#error "build with -DSWASM_GRES_NAME='\"gpu\"' or '\"mps\"' (see the Makefile)"
#endif

/* What Slurm's plugin loader looks up; everything else is hidden
 * (-fvisibility=hidden). */
#define EXPORT __attribute__((visibility("default")))

#define SHIM "gres/" SWASM_GRES_NAME
#define SLOT "gres." SWASM_GRES_NAME

EXPORT const char plugin_name[] =
	"Gres " SWASM_GRES_NAME " WASM shim (a sandboxed WebAssembly gres component)";
EXPORT const char plugin_type[] = SHIM;
EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;

static const swasm_api_t *api;
static swasm_host *host;
static swasm_gres_plugin *plugin;

/* The component is loaded and its init succeeded (guarded by start_lock). */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static bool started;

/* get_devices: the list Slurm holds pointers into (gres_g_get_devices keeps
 * the elements of the first call and marks `alloc` on those of a second
 * one), kept while the component answers the same devices; lists it
 * replaced stay alive until fini (guarded by devices_lock). */
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static List devices, retired_devices;

/* ---- starting ---- */

/* Whether this process is one where gres.c calls gres plugins. */
static bool _in_daemon(void)
{
	return running_in_slurmctld() || running_in_slurmd() ||
	       running_in_slurmstepd();
}

/* The daemon's name for the fatal line. */
static const char *_daemon(void)
{
	if (running_in_slurmctld())
		return "slurmctld";
	if (running_in_slurmstepd())
		return "slurmstepd";
	return "slurmd";
}

/* Stops the daemon: the reason was logged by the caller. */
static void _stop(void) __attribute__((noreturn));
static void _stop(void)
{
	fatal("%s: cannot run the configured gres component; %s stops rather than run Debian's gres/%s in its place",
	      SHIM, _daemon(), SWASM_GRES_NAME);
}

/* AutoDetect= of gres.conf as gres.c parsed it, in the contract's words. */
static const char *_auto_detect(void)
{
	uint32_t flags = gres_get_autodetect_flags();

	if (flags & GRES_AUTODETECT_GPU_OFF)
		return "off";
	if (flags & GRES_AUTODETECT_GPU_NVML)
		return "nvml";
	if (flags & GRES_AUTODETECT_GPU_RSMI)
		return "rsmi";
	if (flags & GRES_AUTODETECT_GPU_ONEAPI)
		return "oneapi";
	return NULL;
}

/*
 * Loads the component and gives it its init (once per process). Any
 * failure stops the daemon: a missing or malformed .wasm, a component of
 * another kind, contract or GRES name, a failing init.
 */
static void _start(void)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_plugin_identity id = { 0 };
	swasm_gres_config config = { 0 };
	arena_t arena = { 0 };

	slurm_mutex_lock(&start_lock);
	if (started)
		goto done;
	if (api->swasm_gres_load(plugin, &err) ||
	    api->swasm_gres_identity(plugin, &id, &err)) {
		error("%s: %s", SHIM, err.message ? err.message : "unknown error");
		_stop();
	}
	if (xstrcmp(id.plugin_type, SHIM)) {
		error("%s: the host configuration's slot [plugins.%s] runs %s (%s): a gres component must manage the GRES it is loaded for (%s)",
		      SHIM, SLOT, id.plugin_type, id.plugin_name, SHIM);
		_stop();
	}
	info("%s: running %s (%s, contract %s)", SHIM, id.plugin_type,
	     id.plugin_name, id.contract_version);
	api->swasm_plugin_identity_free(&id);

	swasm_records_cluster(&arena, &config.cluster, 0);
	config.auto_detect = _auto_detect();
	if (api->swasm_gres_init(plugin, &config, &err)) {
		error("%s: the component's init failed: %s", SHIM,
		      err.message ? err.message : "unknown error");
		_stop();
	}
	arena_free(&arena);
	started = true;
done:
	slurm_mutex_unlock(&start_lock);
	api->swasm_error_clear(&err);
}

/* Whether calls go to the component (started now if need be): false in a
 * process where the library is not used. */
static bool _ready(void)
{
	if (!plugin)
		return false;
	if (!started)
		_start();
	return true;
}

/* Logs a failed call and clears the error. */
static void _failed(const char *what, swasm_error *err)
{
	error("%s: %s failed: %s", SHIM, what,
	      err->message ? err->message : "unknown error");
	api->swasm_error_clear(err);
}

EXPORT extern int init(void)
{
	swasm_error err = SWASM_ERROR_INIT;

	if (plugin)
		return SLURM_SUCCESS;
	if (!_in_daemon()) {
		debug("%s: not a daemon: the slurm-wasm library is not loaded",
		      SHIM);
		return SLURM_SUCCESS;
	}
	if (!(api = swasm_shim_api(SHIM, plugin_type)))
		_stop();
	if (!(host = swasm_shim_open_host(SHIM, api, slurm_conf.slurm_conf)))
		_stop();
	if (!(plugin = api->swasm_gres_open(host, SLOT, &err))) {
		error("%s: %s", SHIM, err.message ? err.message : "unknown error");
		_stop();
	}
	api->swasm_error_clear(&err);
	/* slurmd forks to daemonize after init(): start at the first call */
	if (!running_in_slurmd())
		_start();
	debug("%s loaded", plugin_name);
	return SLURM_SUCCESS;
}

EXPORT extern int fini(void)
{
	swasm_error err = SWASM_ERROR_INIT;

	if (!plugin)
		return SLURM_SUCCESS;
	if (started && api->swasm_gres_fini(plugin, &err))
		_failed("fini", &err);
	api->swasm_gres_close(plugin);
	api->swasm_host_close(host);
	plugin = NULL;
	host = NULL;
	started = false;
	slurm_mutex_lock(&devices_lock);
	FREE_NULL_LIST(devices);
	FREE_NULL_LIST(retired_devices);
	slurm_mutex_unlock(&devices_lock);
	return SLURM_SUCCESS;
}

/* ---- node configuration ---- */

/*
 * Gives the component every gres.conf record of the node (after gres.c's
 * parsing and merging with slurm.conf) and the node, and replaces this
 * GRES's records with its answer (records.c). As Debian's gres/gpu, a
 * configuration the component refuses is fatal.
 */
EXPORT extern int gres_p_node_config_load(List gres_conf_list,
					  node_config_load_t *node_config)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_node_config_result result = { 0 };
	swasm_node_hardware node;
	swasm_gres_conf_record *records;
	arena_t arena = { 0 };
	uint32_t cores;
	size_t n = 0;

	if (!_ready())
		return SLURM_SUCCESS;
	records_node(&arena, node_config->cpu_cnt, &node);
	cores = node.sockets * node.cores_per_socket;
	if (!cores)
		cores = node_config->cpu_cnt;
	records = records_conf(&arena, gres_conf_list, cores, &n);
	if (api->swasm_gres_node_config_load(plugin, records, n, &node,
					     &result, &err)) {
		error("%s: node_config_load failed: %s", SHIM,
		      err.message ? err.message : "unknown error");
		fatal("%s failed to load configuration", plugin_name);
	}
	for (size_t i = 0; i < result.n_warnings; i++)
		info("%s: %s", SHIM, result.warnings[i]);
	records_conf_apply(gres_conf_list, SWASM_GRES_NAME, &result, cores,
			   node_config->cpu_cnt);
	api->swasm_node_config_result_free(&result);
	arena_free(&arena);
	return SLURM_SUCCESS;
}

/* ---- environments ---- */

/* The allocation of this GRES on the node (NULL: none). */
static swasm_gres_allocation *_allocation(swasm_gres_allocation *a,
					  swasm_bitmap *bm,
					  bitstr_t *gres_bit_alloc,
					  uint64_t cnt)
{
	if (!gres_bit_alloc && !cnt)
		return NULL;
	memset(a, 0, sizeof(*a));
	a->name = SWASM_GRES_NAME;
	a->count = cnt;
	if (gres_bit_alloc) {
		*bm = swasm_records_bitmap(gres_bit_alloc);
		a->devices = bm;
	}
	return a;
}

typedef int32_t (*set_env_fn)(const swasm_gres_plugin *,
			      const swasm_gres_allocation *, uint32_t,
			      swasm_env_change_list *, swasm_error *);

static void _set_env(const char *what, set_env_fn fn, char ***env_ptr,
		     bitstr_t *gres_bit_alloc, uint64_t cnt,
		     gres_internal_flags_t flags)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_env_change_list edits = { 0 };
	swasm_gres_allocation a;
	swasm_bitmap bm;

	if (!_ready())
		return;
	if (fn(plugin, _allocation(&a, &bm, gres_bit_alloc, cnt),
	       records_env_flags(flags), &edits, &err)) {
		_failed(what, &err);
		return;
	}
	records_env_apply(env_ptr, &edits);
	api->swasm_env_change_list_free(&edits);
}

/* The batch script's environment (slurmstepd, and slurmd for prologs). */
EXPORT extern void gres_p_job_set_env(char ***job_env_ptr,
				      bitstr_t *gres_bit_alloc,
				      uint64_t gres_cnt,
				      gres_internal_flags_t flags)
{
	if (_ready())
		_set_env("job_set_env", api->swasm_gres_job_set_env,
			 job_env_ptr, gres_bit_alloc, gres_cnt, flags);
}

/* A step's environment (slurmstepd). */
EXPORT extern void gres_p_step_set_env(char ***step_env_ptr,
				       bitstr_t *gres_bit_alloc,
				       uint64_t gres_cnt,
				       gres_internal_flags_t flags)
{
	if (_ready())
		_set_env("step_set_env", api->swasm_gres_step_set_env,
			 step_env_ptr, gres_bit_alloc, gres_cnt, flags);
}

/*
 * One task's environment, in the forked task (after task_g_pre_launch,
 * before exec). The component was loaded in slurmstepd before the fork; the
 * library restarts its deadline ticker in this process, so a runaway call
 * is stopped by its deadline and fuel like any other.
 */
EXPORT extern void gres_p_task_set_env(char ***step_env_ptr,
				       bitstr_t *gres_bit_alloc,
				       uint64_t gres_cnt,
				       bitstr_t *usable_gres,
				       gres_internal_flags_t flags)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_env_change_list edits = { 0 };
	swasm_gres_allocation a, *alloc;
	swasm_bitmap bm, usable;

	if (!_ready())
		return;
	alloc = _allocation(&a, &bm, gres_bit_alloc, gres_cnt);
	if (alloc && usable_gres)
		usable = swasm_records_bitmap(usable_gres);
	if (api->swasm_gres_task_set_env(plugin, alloc,
					 (alloc && usable_gres) ? &usable : NULL,
					 records_env_flags(flags), &edits,
					 &err)) {
		_failed("task_set_env", &err);
		return;
	}
	records_env_apply(step_env_ptr, &edits);
	api->swasm_env_change_list_free(&edits);
}

/* ---- slurmd to slurmstepd ---- */

/*
 * slurmd: the component's state as one packmem() field (empty when the call
 * failed, so that the buffer stays readable by recv_stepd).
 */
EXPORT extern void gres_p_send_stepd(buf_t *buffer)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_bytes bytes = { 0 };

	if (_ready() && api->swasm_gres_send_stepd(plugin, &bytes, &err))
		_failed("send_stepd", &err);
	packmem((char *) bytes.data, (uint32_t) bytes.len, buffer);
	if (plugin)
		api->swasm_bytes_free(&bytes);
}

/* slurmstepd: the field send_stepd packed, given to the component. */
EXPORT extern void gres_p_recv_stepd(buf_t *buffer)
{
	swasm_error err = SWASM_ERROR_INIT;
	char *data = NULL;
	uint32_t len = 0;

	if (unpackmem_ptr(&data, &len, buffer)) {
		error("%s: recv_stepd: slurmd's data is unreadable", SHIM);
		return;
	}
	if (!_ready())
		return;
	if (!len) {
		error("%s: recv_stepd: slurmd sent no state (its send_stepd failed); the component has no devices",
		      SHIM);
		return;
	}
	if (api->swasm_gres_recv_stepd(plugin, (const uint8_t *) data, len,
				       &err))
		_failed("recv_stepd", &err);
}

/* ---- job and step fields ---- */

/*
 * GRES_*_DATA_COUNT and _BITMAP of one node: gres.c answers both itself and
 * calls a plugin only for other types (src/common/gres.c, _get_job_info),
 * which 22.05 has none of; routed to the component all the same. A bitmap
 * answer is given as the record's own bitmap (Slurm hands out a pointer into
 * the job's data), so one that differs from it is refused.
 */
static int _info(const char *what, bool is_job, bitstr_t **bit_alloc,
		 uint64_t *cnt_alloc, uint32_t node_cnt, uint32_t node_inx,
		 int data_type, void *data)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_gres_info_value value = { 0 };
	swasm_gres_allocation a, *alloc;
	swasm_bitmap bm;
	bitstr_t *b;
	int rc = SLURM_SUCCESS;
	uint32_t field;

	if (data_type == (is_job ? GRES_JOB_DATA_COUNT : GRES_STEP_DATA_COUNT))
		field = SWASM_GRES_INFO_COUNT;
	else if (data_type ==
		 (is_job ? GRES_JOB_DATA_BITMAP : GRES_STEP_DATA_BITMAP))
		field = SWASM_GRES_INFO_BITMAP;
	else
		return EINVAL;
	if (!_ready() || (node_inx >= node_cnt))
		return EINVAL;
	b = bit_alloc ? bit_alloc[node_inx] : NULL;
	alloc = _allocation(&a, &bm, b, cnt_alloc ? cnt_alloc[node_inx] : 0);
	if (!alloc)
		return EINVAL;
	if ((is_job ? api->swasm_gres_job_info : api->swasm_gres_step_info)(
		    plugin, alloc, field, &value, &err)) {
		rc = err.code ? err.code : SLURM_ERROR;
		_failed(what, &err);
		return rc;
	}
	if (value.kind == SWASM_GRES_INFO_COUNT) {
		*(uint64_t *) data = value.count;
	} else {
		bool same = b && (value.devices.len == bit_size(b));
		for (uint32_t i = 0; same && (i < value.devices.len); i++)
			same = (((value.devices.words[i / 64] >> (i % 64)) & 1) ==
				(bit_test(b, i) ? 1 : 0));
		if (same) {
			*(bitstr_t **) data = b;
		} else {
			error("%s: %s: the component answered a bitmap other than the allocation's",
			      SHIM, what);
			rc = EINVAL;
		}
	}
	api->swasm_gres_info_value_free(&value);
	return rc;
}

EXPORT extern int gres_p_get_job_info(gres_job_state_t *gres_js,
				      uint32_t node_inx,
				      enum gres_job_data_type data_type,
				      void *data)
{
	return _info("job_info", true, gres_js->gres_bit_alloc,
		     gres_js->gres_cnt_node_alloc, gres_js->node_cnt, node_inx,
		     data_type, data);
}

EXPORT extern int gres_p_get_step_info(gres_step_state_t *gres_ss,
				       uint32_t node_inx,
				       enum gres_step_data_type data_type,
				       void *data)
{
	return _info("step_info", false, gres_ss->gres_bit_alloc,
		     gres_ss->gres_cnt_node_alloc, gres_ss->node_cnt, node_inx,
		     data_type, data);
}

/* ---- devices and hardware ---- */

/*
 * The device files the component manages (for task/cgroup's device
 * limits): the list Slurm gets stays the same object while the component
 * answers the same devices (see `devices`). NULL when it has none or the
 * call failed.
 */
EXPORT extern List gres_p_get_devices(void)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_gres_device_list got = { 0 };
	List out;

	if (!_ready())
		return NULL;
	if (api->swasm_gres_get_devices(plugin, &got, &err)) {
		_failed("get_devices", &err);
		return NULL;
	}
	slurm_mutex_lock(&devices_lock);
	if (!records_devices_equal(devices, &got)) {
		if (devices) {
			if (!retired_devices)
				retired_devices = list_create(
					(ListDelF) list_destroy);
			list_append(retired_devices, devices);
		}
		devices = records_devices(&got);
	}
	out = devices;
	slurm_mutex_unlock(&devices_lock);
	api->swasm_gres_device_list_free(&got);
	return out;
}

/* --gpu-freq for the step's usable GPUs (slurmstepd). */
EXPORT extern void gres_p_step_hardware_init(bitstr_t *usable_gres,
					     char *tres_freq)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_bitmap usable;

	if (!_ready())
		return;
	if (usable_gres)
		usable = swasm_records_bitmap(usable_gres);
	if (api->swasm_gres_step_hardware_init(plugin,
					       usable_gres ? &usable : NULL,
					       tres_freq, &err))
		_failed("step_hardware_init", &err);
}

EXPORT extern void gres_p_step_hardware_fini(void)
{
	swasm_error err = SWASM_ERROR_INIT;

	if (_ready() && api->swasm_gres_step_hardware_fini(plugin, &err))
		_failed("step_hardware_fini", &err);
}

/* ---- prolog and epilog ---- */

/*
 * slurmctld: the record gres.c packs into the prolog and epilog requests
 * (per node of the job, its device bitmap and count of this GRES). This is
 * Slurm's wire format, built here as Debian's plugins build it; what the
 * record means for the environment is the component's, at epilog_set_env.
 */
EXPORT extern gres_epilog_info_t *gres_p_epilog_build_env(
	gres_job_state_t *gres_js)
{
	gres_epilog_info_t *gres_ei = xmalloc(sizeof(*gres_ei));

	gres_ei->node_cnt = gres_js->node_cnt;
	gres_ei->gres_bit_alloc = xcalloc(gres_ei->node_cnt + 1,
					  sizeof(bitstr_t *));
	gres_ei->gres_cnt_node_alloc = xcalloc(gres_ei->node_cnt + 1,
					       sizeof(uint64_t));
	for (uint32_t i = 0; i < gres_ei->node_cnt; i++) {
		if (!gres_js->gres_bit_alloc || !gres_js->gres_bit_alloc[i])
			continue;
		gres_ei->gres_bit_alloc[i] = bit_copy(gres_js->gres_bit_alloc[i]);
		if (gres_js->gres_cnt_node_alloc)
			gres_ei->gres_cnt_node_alloc[i] =
				gres_js->gres_cnt_node_alloc[i];
	}
	return gres_ei;
}

/*
 * slurmd: the prolog's or epilog's environment for node `node_inx` of the
 * job. Slurm frees its gres_epilog_info_t without telling the plugin, so the
 * component's epilog info is built from it, used and freed here.
 */
EXPORT extern void gres_p_epilog_set_env(char ***epilog_env_ptr,
					 gres_epilog_info_t *gres_ei,
					 int node_inx)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_env_change_list edits = { 0 };
	swasm_gres_epilog_info *info = NULL;
	arena_t arena = { 0 };
	swasm_job job;

	if (!_ready() || !gres_ei || (node_inx < 0) ||
	    ((uint32_t) node_inx >= gres_ei->node_cnt))
		return;
	records_epilog_job(&arena, SWASM_GRES_NAME, gres_ei, &job);
	if (api->swasm_gres_epilog_build_env(plugin, &job, &info, &err)) {
		_failed("epilog_build_env", &err);
		goto done;
	}
	if (!info)
		goto done;
	if (api->swasm_gres_epilog_set_env(plugin, info, node_inx, &edits,
					   &err))
		_failed("epilog_set_env", &err);
	else
		records_env_apply(epilog_env_ptr, &edits);
	api->swasm_env_change_list_free(&edits);
	if (api->swasm_gres_epilog_info_free(plugin, info, &err))
		_failed("epilog_info_free", &err);
done:
	arena_free(&arena);
}
