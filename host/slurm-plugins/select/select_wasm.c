/*
 * select_wasm.c: the select/wasm plugin of Slurm 22.05: node, core, memory
 * and GPU allocation decided by a sandboxed WebAssembly select component
 * (select_cons_tres.wasm or a site's own cons_tres-like component), run by
 * libslurm_wasm.so.
 *
 * Structure (the hybrid of ../../../../shared/design/SLURM-SHIMS.md):
 *   - Slurm's own select/cons_tres sources (cons_common/ *.c, cons_tres/ *.c)
 *     and select/linear's (linear/select_linear.c) are compiled out of the
 *     configured Slurm tree into this plugin (the Makefile; nothing of them
 *     is in this repository). They keep the bookkeeping: the node usage and
 *     partition row tables (cons_tres: job_res_add_job, job_res_rm_job;
 *     linear: its cr_record), the GRES state of every node
 *     (gres_ctld_job_alloc/dealloc), nodeinfo for sinfo, jobinfo, suspend,
 *     resume, resize, expand, the steps' CPUs.
 *   - cons_rename.h and linear_rename.h give every select_p_* function of
 *     those files a cons_ or linear_ name; this file defines all 36 and
 *     calls the bookkeeping in use (BK()). Which one is decided from
 *     SelectTypeParameters alone (linear's without CR_CPU/CR_Core/CR_Socket,
 *     which cons_tres refuses; else cons_tres's), so that slurmctld and the
 *     clients pack and unpack nodeinfo and jobinfo alike.
 *   - The decisions are the component's: select_p_job_test asks its
 *     job-test for every RUN_NOW, TEST_ONLY and WILL_RUN, and
 *     select_p_resv_test its resv-test; the bookkeeping's own decision code
 *     (_run_now, _will_run_test, _test_only of cons_common/job_test.c and
 *     select_linear.c, static) is never called. Replacing those static
 *     functions inside the compiled files would need an edit of Slurm's
 *     source; wrapping at select_p_job_test needs none: the wrapper does
 *     what common_job_test does around them (CoreSpec turns a job
 *     exclusive, a default mc_ptr, the NODE_CR_* requirement, the
 *     partition's cr_type) and writes the answer into job_resrcs,
 *     gres_bit_select and total_cpus as _job_test does for its own
 *     (records_apply).
 *   - Readiness and steps are asked of both: select_p_job_ready is the
 *     bookkeeping's answer (node power and boot), not ready when the
 *     component says so; select_p_step_start, _step_pick_nodes and
 *     _step_finish are the bookkeeping's, and the component's step-start,
 *     step-avail-nodes (which becomes *avail_nodes) and step-finish
 *     (select/cray_aries keeps a job's later steps off its counter steps'
 *     blades).
 *   - The component's tables follow slurmctld's: job-begin where the
 *     bookkeeping commits (cons_tres: select_p_select_nodeinfo_set, after
 *     the C commit, also for every job recovered at start-up; linear:
 *     select_p_job_begin), job-fini, suspend, resume, resize, node-init at
 *     (re)configuration, reconfigure; node state changes before each
 *     decision (22.05 calls no select function for them), and a new node
 *     table when a node's GRES devices arrive at its registration. The
 *     component's state is not restored from a file: after a restart its
 *     usage is rebuilt from the jobs slurmctld recovered, which are
 *     authoritative (a saved state would count them twice).
 *   - SELECT_CR_PLUGIN is the bookkeeping's answer: cons_tres under
 *     cons_tres's (gres/mps and --gpus* keep working), 0 under linear's. A
 *     component whose own cr-plugin answer differs is logged at start.
 *
 * Every client command (sinfo, squeue, scontrol, sbatch, srun) loads every
 * select plugin of PluginDir and calls init(): there the library is never
 * opened, and the functions clients call (nodeinfo and jobinfo pack, unpack,
 * get) are the bookkeeping's, so a client unpacks what slurmctld packs.
 *
 * Faults: when the component fails a call, the host's failure policy
 * (restart, fail, fallback to the bundled plugin) has already acted; the
 * library checks every answer against the candidates, the node table and
 * the preemption candidates, and this file checks again what it applies
 * (records_check): an answer that is not sound is logged and the job is not
 * started by it (the test fails; slurmctld tries again later).
 *
 * Debug mode: with DebugFlags=SelectType, after every commit and release
 * the shim compares, for each node of the job, the bookkeeping's allocated
 * CPUs and memory with the component's nodeinfo and logs the first
 * difference.
 */
#include "config.h"

#include <string.h>

#include "slurm/slurm_errno.h"
#include "src/common/gres.h"
#include "src/common/job_resources.h"
#include "src/common/list.h"
#include "src/common/node_conf.h"
#include "src/common/plugin.h"
#include "src/common/run_in_daemon.h"
#include "src/common/select.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/preempt.h"
#include "src/slurmctld/slurmctld.h"

#include "swasm_shim.h"

#include "idmap.h"
#include "records.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * plugin_id: set by init(), before select.c reads it (select_g_init checks
 * the ids of all loaded select plugins after each one's init ran).
 *
 * Slurm's clients decide some things by the default select plugin's id
 * alone: scontrol accepts CoreCnt= reservations only from cons_res's or
 * cons_tres's (state_control.c, state_control_corecnt_supported), and
 * select_running_linear_based() is linear's. So select/wasm takes the id of
 * the Slurm plugin whose bookkeeping it runs (SELECT_PLUGIN_CONS_TRES 109,
 * SELECT_PLUGIN_LINEAR 102), which is also what it packs: nodeinfo and
 * jobinfo in that plugin's format. It can only where that plugin is not in
 * PluginDir, since select_g_init loads every select plugin there and is
 * fatal on duplicate ids; then it takes SWASM_SELECT_OWN_ID, which is in
 * neither Slurm's ids (slurm.h, enum select_plugin_type: 101, 102,
 * 106-110) nor the retired ones (100, 103-105).
 *
 * slurmctld, slurmd and every client decide alike as long as they see the
 * same PluginDir. The id is written into saved job state (jobinfo): a
 * slurmctld restarted after PluginDir changed so that the id changes cannot
 * read the jobs it saved under the other (select.c,
 * select_g_select_jobinfo_unpack); init logs the id in use.
 */
#define SWASM_SELECT_OWN_ID 120
EXPORT const char plugin_name[] =
	"Select WASM plugin (a sandboxed WebAssembly select component)";
EXPORT const char plugin_type[] = "select/wasm";
EXPORT uint32_t plugin_id = SWASM_SELECT_OWN_ID;
EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;

#define SHIM "select/wasm"

/*
 * The bookkeeping's functions: cons_tres's (renamed by cons_rename.h) and
 * linear's (renamed by linear_rename.h), declared as slurm_select_ops_t
 * (src/common/select.h) calls them.
 */
#define SWASM_BOOKKEEPING(P)                                                    \
	extern int P##_init(void);                                              \
	extern int P##_fini(void);                                              \
	extern int P##_select_p_state_save(char *dir_name);                     \
	extern int P##_select_p_state_restore(char *dir_name);                  \
	extern int P##_select_p_job_init(List job_list);                        \
	extern int P##_select_p_node_init(void);                                \
	extern int P##_select_p_job_begin(job_record_t *job_ptr);               \
	extern int P##_select_p_job_ready(job_record_t *job_ptr);               \
	extern int P##_select_p_job_expand(job_record_t *from_job_ptr,          \
					   job_record_t *to_job_ptr);           \
	extern int P##_select_p_job_resized(job_record_t *job_ptr,              \
					    node_record_t *node_ptr);           \
	extern int P##_select_p_job_signal(job_record_t *job_ptr, int signal);  \
	extern int P##_select_p_job_fini(job_record_t *job_ptr);                \
	extern int P##_select_p_job_suspend(job_record_t *job_ptr,              \
					    bool indf_susp);                    \
	extern int P##_select_p_job_resume(job_record_t *job_ptr,               \
					   bool indf_susp);                     \
	extern bitstr_t *P##_select_p_step_pick_nodes(                          \
		job_record_t *job_ptr, select_jobinfo_t *step_jobinfo,          \
		uint32_t node_count, bitstr_t **avail_nodes);                   \
	extern int P##_select_p_step_start(step_record_t *step_ptr);            \
	extern int P##_select_p_step_finish(step_record_t *step_ptr,            \
					    bool killing_step);                 \
	extern int P##_select_p_select_nodeinfo_pack(                           \
		select_nodeinfo_t *nodeinfo, buf_t *buffer,                     \
		uint16_t protocol_version);                                     \
	extern int P##_select_p_select_nodeinfo_unpack(                         \
		select_nodeinfo_t **nodeinfo, buf_t *buffer,                    \
		uint16_t protocol_version);                                     \
	extern select_nodeinfo_t *P##_select_p_select_nodeinfo_alloc(void);     \
	extern int P##_select_p_select_nodeinfo_free(                           \
		select_nodeinfo_t *nodeinfo);                                   \
	extern int P##_select_p_select_nodeinfo_set_all(void);                  \
	extern int P##_select_p_select_nodeinfo_set(job_record_t *job_ptr);     \
	extern int P##_select_p_select_nodeinfo_get(                            \
		select_nodeinfo_t *nodeinfo, enum select_nodedata_type dinfo,   \
		enum node_states state, void *data);                            \
	extern select_jobinfo_t *P##_select_p_select_jobinfo_alloc(void);       \
	extern int P##_select_p_select_jobinfo_free(select_jobinfo_t *jobinfo); \
	extern int P##_select_p_select_jobinfo_set(                             \
		select_jobinfo_t *jobinfo,                                      \
		enum select_jobdata_type data_type, void *data);                \
	extern int P##_select_p_select_jobinfo_get(                             \
		select_jobinfo_t *jobinfo,                                      \
		enum select_jobdata_type data_type, void *data);                \
	extern select_jobinfo_t *P##_select_p_select_jobinfo_copy(              \
		select_jobinfo_t *jobinfo);                                     \
	extern int P##_select_p_select_jobinfo_pack(                            \
		select_jobinfo_t *jobinfo, buf_t *buffer,                       \
		uint16_t protocol_version);                                     \
	extern int P##_select_p_select_jobinfo_unpack(                          \
		select_jobinfo_t **jobinfo_pptr, buf_t *buffer,                 \
		uint16_t protocol_version);                                     \
	extern char *P##_select_p_select_jobinfo_sprint(                        \
		select_jobinfo_t *jobinfo, char *buf, size_t size, int mode);   \
	extern char *P##_select_p_select_jobinfo_xstrdup(                       \
		select_jobinfo_t *jobinfo, int mode);                           \
	extern int P##_select_p_get_info_from_plugin(                           \
		enum select_plugindata_info dinfo, job_record_t *job_ptr,       \
		void *data);                                                    \
	extern int P##_select_p_update_node_config(int index);                  \
	extern int P##_select_p_reconfigure(void);
SWASM_BOOKKEEPING(cons)
SWASM_BOOKKEEPING(linear)

/*
 * Which bookkeeping runs: select/linear's where SelectTypeParameters has
 * none of CR_CPU, CR_Core and CR_Socket (cons_tres refuses such a
 * configuration, and select/linear refuses the others), else cons_tres's.
 * Decided in init() from slurm.conf alone, so that slurmctld and every
 * client pack and unpack nodeinfo and jobinfo alike.
 */
static bool linear_mode;
#define BK(f) (linear_mode ? linear_##f : cons_##f)

static const swasm_api_t *api;
static swasm_host *host;
static swasm_select_plugin *plugin;
/* the component's init has run (at the first node_init) */
static bool plugin_ready;

/* The node states the component was last given (by node index) and when
 * (compared with slurmctld's last_node_update): nodes register after node_init, go
 * down, drain, power off; 22.05 calls no select function for that, so the
 * shim sends update-node-state for each change before a decision. */
static uint32_t *sent_states;
static int n_sent_states;
static time_t sent_node_update;
/* A fingerprint of the GRES (counts and device groups) of each node as the
 * component was last given them: gres.conf's devices of a node arrive when
 * its slurmd registers, after node_init. */
static uint64_t *sent_gres;

/* Jobs whose allocation the component holds (job-begin given, no
 * job-fini yet); guarded by the job write lock every caller holds. */
static idmap_t known_jobs;

/* ---- errors ---- */

static void _failed(const char *what, job_record_t *job_ptr, swasm_error *err)
{
	if (job_ptr)
		error("%s: %s of %pJ failed: %s", SHIM, what, job_ptr,
		      err->message ? err->message : "unknown error");
	else
		error("%s: %s failed: %s", SHIM, what,
		      err->message ? err->message : "unknown error");
	api->swasm_error_clear(err);
}

/*
 * What slurmctld hands a select plugin as SELECT_JOBDATA_NETWORK (job_mgr.c
 * _copy_job_desc_to_job_record, _update_job): the job's --network, which a
 * select wrapper over the component's plugin (select/cray_aries) reads
 * through its job-network import. Told before each call that may read it.
 */
static void _network(job_record_t *job_ptr)
{
	swasm_error err = SWASM_ERROR_INIT;

	if (api->swasm_select_set_job_network(plugin, job_ptr->job_id,
					      job_ptr->network, &err))
		_failed("set-job-network", job_ptr, &err);
}

/* ---- plugin life ---- */

/* The id select/wasm takes (see plugin_id): the stock plugin's, unless
 * that plugin is in PluginDir as select.c lists it
 * (plugin_get_plugins_of_type). */
static uint32_t _plugin_id(void)
{
	const char *stock = linear_mode ? "select/linear" : "select/cons_tres";
	List names = plugin_get_plugins_of_type("select");
	bool beside = names && list_find_first(names, slurm_find_char_in_list,
					       (void *) stock);
	uint32_t id = beside ? SWASM_SELECT_OWN_ID :
		      linear_mode ? SELECT_PLUGIN_LINEAR :
				    SELECT_PLUGIN_CONS_TRES;

	FREE_NULL_LIST(names);
	if (running_in_slurmctld())
		info("%s: plugin id %u (%s)", SHIM, id,
		     beside ? "its own: the stock plugin is in PluginDir" :
			      linear_mode ? "select/linear's" :
					    "select/cons_tres's");
	return id;
}

EXPORT extern int init(void)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_plugin_identity id = { 0 };
	int rc;

	linear_mode = slurm_conf.select_type_param &&
		      !(slurm_conf.select_type_param &
			(CR_CPU | CR_CORE | CR_SOCKET));
	plugin_id = _plugin_id();
	rc = BK(init)();

	if ((rc != SLURM_SUCCESS) || !running_in_slurmctld() || plugin)
		return rc;

	if (!(api = swasm_shim_api(SHIM, plugin_type)))
		return SLURM_ERROR;
	if (!(host = swasm_shim_open_host(SHIM, api, slurm_conf.slurm_conf)))
		return SLURM_ERROR;
	if (!(plugin = api->swasm_select_open(host, NULL, &err)) ||
	    api->swasm_select_identity(plugin, &id, &err)) {
		error("%s: %s", SHIM, err.message ? err.message : "unknown error");
		api->swasm_error_clear(&err);
		if (plugin)
			api->swasm_select_close(plugin);
		plugin = NULL;
		api->swasm_host_close(host);
		host = NULL;
		return SLURM_ERROR;
	}
	info("%s: running %s (%s, contract %s)", SHIM, id.plugin_type,
	     id.plugin_name, id.contract_version);
	api->swasm_plugin_identity_free(&id);
	return SLURM_SUCCESS;
}

EXPORT extern int fini(void)
{
	swasm_error err = SWASM_ERROR_INIT;

	if (plugin) {
		if (plugin_ready && api->swasm_select_fini(plugin, &err))
			_failed("fini", NULL, &err);
		api->swasm_select_close(plugin);
		plugin = NULL;
		plugin_ready = false;
		api->swasm_host_close(host);
		host = NULL;
		idmap_clear(&known_jobs, NULL, NULL);
	}
	return BK(fini)();
}

/* ---- state ---- */

/* The bookkeeping's state files; the component keeps none (see the
 * header). */
EXPORT extern int select_p_state_save(char *dir_name)
{
	return BK(select_p_state_save)(dir_name);
}

EXPORT extern int select_p_state_restore(char *dir_name)
{
	return BK(select_p_state_restore)(dir_name);
}

EXPORT extern int select_p_job_init(List job_list)
{
	return BK(select_p_job_init)(job_list);
}

/* The running and suspended jobs, with their resources, in the arena. */
static swasm_job *_running_jobs(arena_t *arena, size_t *n)
{
	swasm_job *jobs;
	job_record_t *job_ptr;
	ListIterator itr;
	size_t k = 0;

	*n = 0;
	if (!job_list)
		return NULL;
	jobs = arena_alloc(arena, (list_count(job_list) + 1) * sizeof(*jobs));
	itr = list_iterator_create(job_list);
	while ((job_ptr = list_next(itr))) {
		if (!(IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr)) ||
		    !job_ptr->job_resrcs)
			continue;
		if (records_job(arena, job_ptr, true, &jobs[k]))
			k++;
	}
	list_iterator_destroy(itr);
	*n = k;
	return jobs;
}

/* What of a node's GRES the component's decisions depend on, as a hash. */
static uint64_t _gres_fingerprint(const swasm_node *n)
{
	uint64_t h = IDMAP_FNV_SEED;

	for (size_t g = 0; g < n->n_gres; g++) {
		h = idmap_hash_str(h, n->gres[g].name);
		h = idmap_hash_str(h, n->gres[g].type_name);
		h = idmap_hash(h, &n->gres[g].count, sizeof(uint64_t));
	}
	for (size_t g = 0; g < n->n_gres_topology; g++) {
		const swasm_gres_device_group *d = &n->gres_topology[g];
		h = idmap_hash_str(h, d->name);
		h = idmap_hash_str(h, d->type_name);
		h = idmap_hash(h, &d->count, sizeof(uint64_t));
		if (d->cores && d->cores->len)
			h = idmap_hash(h, d->cores->words,
				       ((d->cores->len + 63) / 64) * 8);
		if (d->n_links)
			h = idmap_hash(h, d->links, d->n_links * sizeof(int32_t));
	}
	return h;
}

/* Remembers what the component was given of each node. */
static void _note_nodes(const swasm_node *nodes, size_t n_nodes)
{
	if (n_sent_states != node_record_count) {
		xfree(sent_states);
		xfree(sent_gres);
		n_sent_states = node_record_count;
		sent_states = xcalloc(n_sent_states ? n_sent_states : 1,
				      sizeof(uint32_t));
		sent_gres = xcalloc(n_sent_states ? n_sent_states : 1,
				    sizeof(uint64_t));
	}
	for (size_t i = 0; i < n_nodes; i++) {
		if (nodes[i].index >= n_sent_states)
			continue;
		sent_states[nodes[i].index] = nodes[i].state;
		sent_gres[nodes[i].index] = _gres_fingerprint(&nodes[i]);
	}
	sent_node_update = time(NULL);
}

static void _begin(job_record_t *job_ptr);

/*
 * node-init with `nodes`, then job-begin of every running and suspended job
 * (the component's update-node-state takes a node's state, not its GRES
 * devices: a node whose devices changed is given through a new node table).
 * Caller holds the job and node write locks.
 */
static int _renode(const swasm_node *nodes, size_t n_nodes)
{
	swasm_error err = SWASM_ERROR_INIT;
	job_record_t *job_ptr;
	ListIterator itr;

	if (api->swasm_select_node_init(plugin, nodes, n_nodes, &err)) {
		_failed("node-init", NULL, &err);
		return SLURM_ERROR;
	}
	idmap_clear(&known_jobs, NULL, NULL);
	_note_nodes(nodes, n_nodes);
	if (!job_list)
		return SLURM_SUCCESS;
	itr = list_iterator_create(job_list);
	while ((job_ptr = list_next(itr))) {
		if (IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr))
			_begin(job_ptr);
	}
	list_iterator_destroy(itr);
	return SLURM_SUCCESS;
}

/*
 * The component's configuration and node table, at every node_init
 * (slurmctld's start and each scontrol reconfigure): its init the first
 * time, then reconfigure; then node-init, which empties its usage tables:
 * read_config.c gives every running and suspended job afterwards through
 * select_p_select_nodeinfo_set.
 */
static int _component_nodes(void)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_plugin_info_value v = { 0 };
	swasm_select_config config;
	arena_t arena = { 0 };
	swasm_node *nodes;
	size_t n_nodes;
	int rc = SLURM_ERROR;

	records_config(&arena, &config);
	if (!plugin_ready) {
		if (api->swasm_select_init(plugin, &config, &err)) {
			error("%s: the plugin's init failed: %s", SHIM,
			      err.message ? err.message : "unknown error");
			api->swasm_error_clear(&err);
			goto done;
		}
		plugin_ready = true;
		if (api->swasm_select_get_info_from_plugin(
			    plugin, SWASM_SELECT_CR_PLUGIN, NULL, &v, &err)) {
			_failed("get-info-from-plugin(cr-plugin)", NULL, &err);
			goto done;
		}
		if ((v.kind != SWASM_PLUGIN_INFO_NUMBER) ||
		    (v.number != (linear_mode ? 0 : SELECT_TYPE_CONS_TRES)))
			info("%s: the plugin answers cr-plugin %u, the bookkeeping SelectTypeParameters calls for is %s's: its allocations are kept as %s keeps them, and Slurm is told %s",
			     SHIM, v.number, linear_mode ? "linear" : "cons_tres",
			     linear_mode ? "linear" : "cons_tres",
			     linear_mode ? "linear" : "cons_tres");
		api->swasm_plugin_info_value_free(&v);
	} else {
		/* the new configuration; node-init below discards the usage
		 * and slurmctld gives every job again through
		 * select_p_select_nodeinfo_set (read_config.c) */
		if (api->swasm_select_reconfigure(plugin, &config, NULL, 0,
						  &err)) {
			_failed("reconfigure", NULL, &err);
			goto done;
		}
	}
	nodes = records_nodes(&arena, &n_nodes);
	for (size_t i = 0; i < n_nodes; i++)
		debug2("%s: node-init: node %s (index %u): state %#x, %u CPUs (%u x %u x %u), %"PRIu64" MB, %zu partitions, %zu GRES device groups",
		       SHIM, nodes[i].name, nodes[i].index, nodes[i].state,
		       nodes[i].cpus, nodes[i].sockets, nodes[i].cores_per_socket,
		       nodes[i].threads_per_core, nodes[i].real_memory,
		       nodes[i].n_partitions, nodes[i].n_gres_topology);
	if (api->swasm_select_node_init(plugin, nodes, n_nodes, &err)) {
		_failed("node-init", NULL, &err);
		goto done;
	}
	idmap_clear(&known_jobs, NULL, NULL);
	_note_nodes(nodes, n_nodes);
	rc = SLURM_SUCCESS;
done:
	arena_free(&arena);
	return rc;
}

EXPORT extern int select_p_node_init(void)
{
	int rc = BK(select_p_node_init)();

	if ((rc != SLURM_SUCCESS) || !plugin)
		return rc;
	return _component_nodes();
}

/* update-node-state for every node whose state changed since the component
 * last heard of it, or a new node table when a node's GRES devices changed
 * (caller holds the job and node write locks). */
static void _sync_node_states(void)
{
	swasm_error err = SWASM_ERROR_INIT;
	arena_t arena = { 0 };
	swasm_node *nodes;
	size_t n_nodes;

	/* last_node_update counts seconds: a change in the second of the
	 * last sync may not have been seen yet */
	if (last_node_update < sent_node_update)
		return;
	nodes = records_nodes(&arena, &n_nodes);
	for (size_t i = 0; i < n_nodes; i++) {
		uint32_t inx = nodes[i].index;
		if ((inx >= n_sent_states) ||
		    (sent_gres[inx] != _gres_fingerprint(&nodes[i]))) {
			debug("%s: node %s: its GRES devices changed, the plugin gets a new node table",
			      SHIM, nodes[i].name);
			_renode(nodes, n_nodes);
			arena_free(&arena);
			return;
		}
	}
	for (size_t i = 0; i < n_nodes; i++) {
		uint32_t inx = nodes[i].index;
		if ((inx < n_sent_states) && (sent_states[inx] == nodes[i].state))
			continue;
		debug2("%s: update-node-state: node %s: state %#x", SHIM,
		       nodes[i].name, nodes[i].state);
		if (api->swasm_select_update_node_state(plugin, &nodes[i], &err)) {
			_failed("update-node-state", NULL, &err);
			arena_free(&arena);
			return;
		}
		if (inx < n_sent_states)
			sent_states[inx] = nodes[i].state;
	}
	sent_node_update = time(NULL);
	arena_free(&arena);
}

/* ---- the debug comparison ---- */

/*
 * With DebugFlags=SelectType: cons_tres's allocated CPUs and memory of each
 * node of the job (its nodeinfo, refreshed first) against the component's
 * nodeinfo of the node; the first difference is logged.
 */
static void _compare_nodes(job_record_t *job_ptr, const char *when)
{
	job_resources_t *jr = job_ptr->job_resrcs;

	if (!(slurm_conf.debug_flags & DEBUG_FLAG_SELECT_TYPE) || !jr ||
	    !jr->node_bitmap)
		return;
	BK(select_p_select_nodeinfo_set_all)();
	{
		swasm_error err = SWASM_ERROR_INIT;
		if (api->swasm_select_nodeinfo_set_all(plugin, &err)) {
			_failed("nodeinfo-set-all", job_ptr, &err);
			return;
		}
	}
	for (int i = 0; i < bit_size(jr->node_bitmap); i++) {
		swasm_error err = SWASM_ERROR_INIT;
		swasm_select_nodeinfo *ni = NULL;
		swasm_nodeinfo_value cpus = { 0 }, mem = { 0 };
		node_record_t *node_ptr;
		uint16_t c_cpus = 0;
		uint64_t c_mem = 0;

		if (!bit_test(jr->node_bitmap, i) ||
		    !(node_ptr = node_record_table_ptr[i]))
			continue;
		BK(select_p_select_nodeinfo_get)(node_ptr->select_nodeinfo->data,
					     SELECT_NODEDATA_SUBCNT,
					     NODE_STATE_ALLOCATED, &c_cpus);
		BK(select_p_select_nodeinfo_get)(node_ptr->select_nodeinfo->data,
					     SELECT_NODEDATA_MEM_ALLOC,
					     NODE_STATE_ALLOCATED, &c_mem);
		if (api->swasm_select_node_nodeinfo(plugin, i, &ni, &err) ||
		    api->swasm_select_nodeinfo_get(plugin, ni,
						   SWASM_SELECT_NODEDATA_SUBCNT,
						   NODE_STATE_ALLOCATED, &cpus,
						   &err) ||
		    api->swasm_select_nodeinfo_get(plugin, ni,
						   SWASM_SELECT_NODEDATA_MEM_ALLOC,
						   NODE_STATE_ALLOCATED, &mem,
						   &err)) {
			_failed("the debug comparison", job_ptr, &err);
			if (ni)
				api->swasm_select_nodeinfo_free(plugin, ni, NULL);
			return;
		}
		if ((cpus.count != c_cpus) || (mem.memory != c_mem))
			info("%s: debug: after %s of %pJ node %s differs: Slurm's bookkeeping has %u CPUs and %"PRIu64" MB allocated, the plugin %u CPUs and %"PRIu64" MB",
			     SHIM, when, job_ptr, node_ptr->name, c_cpus,
			     c_mem, cpus.count, mem.memory);
		api->swasm_nodeinfo_value_free(&cpus);
		api->swasm_nodeinfo_value_free(&mem);
		api->swasm_select_nodeinfo_free(plugin, ni, NULL);
		if ((cpus.count != c_cpus) || (mem.memory != c_mem))
			return;
	}
}

/* ---- job_test ---- */

/* NODE_CR_* requirement of the job in its partition (what cons_common's
 * _get_job_node_req answers). */
static uint16_t _node_req(job_record_t *job_ptr)
{
	int max_share = job_ptr->part_ptr ? job_ptr->part_ptr->max_share : 1;

	if (max_share == 0)
		return NODE_CR_RESERVED;
	if (max_share & SHARED_FORCE)
		return NODE_CR_AVAILABLE;
	if ((max_share > 1) && (job_ptr->details->share_res == 1))
		return NODE_CR_AVAILABLE;
	return NODE_CR_ONE_ROW;
}

/* SelectTypeParameters with the partition's own SelectTypeParameters (as
 * cons_common's _setup_cr_type). */
static uint16_t _cr_type(job_record_t *job_ptr)
{
	uint16_t cr_type = slurm_conf.select_type_param;

	if (job_ptr->part_ptr && job_ptr->part_ptr->cr_type &&
	    (cr_type & (CR_SOCKET | CR_CORE))) {
		cr_type &= ~(CR_SOCKET | CR_CORE | CR_MEMORY);
		cr_type |= job_ptr->part_ptr->cr_type;
	}
	return cr_type;
}

/* The preemption candidates with the mode each would be preempted by. */
static swasm_preemptee_candidate *_candidates(arena_t *arena, List list,
					      size_t *n)
{
	swasm_preemptee_candidate *out;
	job_record_t *job_ptr;
	ListIterator itr;
	size_t k = 0;

	*n = 0;
	if (!list || !list_count(list))
		return NULL;
	out = arena_alloc(arena, list_count(list) * sizeof(*out));
	itr = list_iterator_create(list);
	while ((job_ptr = list_next(itr))) {
		uint16_t mode = slurm_job_preempt_mode(job_ptr);
		out[k].job_id = job_ptr->job_id;
		if (mode & PREEMPT_MODE_SUSPEND)
			out[k].mode = SWASM_PREEMPT_MODE_SUSPEND;
		else if (mode & PREEMPT_MODE_REQUEUE)
			out[k].mode = SWASM_PREEMPT_MODE_REQUEUE;
		else
			out[k].mode = SWASM_PREEMPT_MODE_CANCEL;
		k++;
	}
	list_iterator_destroy(itr);
	*n = k;
	return out;
}

/* `node_bitmap` becomes the answer's nodes (a subset of its bits). */
static void _set_nodes(bitstr_t *node_bitmap, const swasm_bitmap *nodes)
{
	bit_clear_all(node_bitmap);
	for (uint32_t i = 0; (i < nodes->len) && (i < bit_size(node_bitmap)); i++) {
		if (nodes->words[i / 64] & (UINT64_C(1) << (i % 64)))
			bit_set(node_bitmap, i);
	}
}

EXPORT extern int select_p_job_test(job_record_t *job_ptr,
				    bitstr_t *node_bitmap, uint32_t min_nodes,
				    uint32_t max_nodes, uint32_t req_nodes,
				    uint16_t mode, List preemptee_candidates,
				    List *preemptee_job_list,
				    bitstr_t *exc_core_bitmap)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_job_test_request req = { 0 };
	swasm_job_test_result res = { 0 };
	struct job_details *d = job_ptr->details;
	uint16_t base = mode & SELECT_MODE_BASE;
	swasm_bitmap exc;
	arena_t arena = { 0 };
	const char *fault;
	swasm_job job;
	int rc;

	if (!d)
		return EINVAL;
	if (!plugin || !plugin_ready) {
		error("%s: job_test of %pJ before the plugin was set up", SHIM,
		      job_ptr);
		return SLURM_ERROR;
	}

	/* what common_job_test does before deciding */
	if (!(slurm_conf.conf_flags & CTL_CONF_ASRU))
		d->core_spec = NO_VAL16;
	if ((d->core_spec != NO_VAL16) && (d->whole_node != 1)) {
		info("Setting Exclusive mode for %pJ with CoreSpec=%u",
		     job_ptr, d->core_spec);
		d->whole_node = 1;
	}
	if (!d->mc_ptr) {
		d->mc_ptr = xmalloc(sizeof(struct multi_core_data));
		d->mc_ptr->sockets_per_node = NO_VAL16;
		d->mc_ptr->cores_per_socket = NO_VAL16;
		d->mc_ptr->threads_per_core = NO_VAL16;
	}

	_sync_node_states();
	if (!records_job(&arena, job_ptr, false, &job)) {
		arena_free(&arena);
		return SLURM_ERROR;
	}
	req.job = &job;
	req.candidates = swasm_records_bitmap(node_bitmap);
	req.min_nodes = min_nodes;
	req.max_nodes = max_nodes;
	req.req_nodes = req_nodes;
	req.mode = mode;
	req.preemptee_candidates = _candidates(&arena, preemptee_candidates,
					       &req.n_preemptee_candidates);
	if (exc_core_bitmap) {
		exc = swasm_records_bitmap(exc_core_bitmap);
		req.excluded_cores = &exc;
	}

	_network(job_ptr);
	if (api->swasm_select_job_test(plugin, &req, &res, &err)) {
		rc = err.code ? err.code : SLURM_ERROR;
		/* the plugin's own "no" (it cannot place the job) is an
		 * answer, logged as cons_tres logs its refusals; a fault, an
		 * answer the library refused or a failed call is an error */
		if (err.plugin_message)
			debug("%s: job-test of %pJ mode %u: %s", SHIM, job_ptr,
			      mode, err.message ? err.message : "");
		else
			_failed("job-test", job_ptr, &err);
		api->swasm_error_clear(&err);
		arena_free(&arena);
		return rc;
	}
	arena_free(&arena);

	if ((fault = records_check(&res.resources, node_bitmap))) {
		error("%s: job-test of %pJ: the plugin's answer is not applied: %s",
		      SHIM, job_ptr, fault);
		api->swasm_job_test_result_free(&res);
		return SLURM_ERROR;
	}

	if (base == SELECT_MODE_RUN_NOW) {
		rc = records_apply(job_ptr, &res.resources, _node_req(job_ptr),
				   _cr_type(job_ptr), linear_mode);
		if (rc != SLURM_SUCCESS) {
			api->swasm_job_test_result_free(&res);
			return rc;
		}
	} else {
		job_ptr->total_cpus = res.resources.ncpus;
		if (res.has_start_time)
			job_ptr->start_time = res.start_time;
	}
	_set_nodes(node_bitmap, &res.resources.nodes);

	if ((base != SELECT_MODE_TEST_ONLY) && preemptee_job_list &&
	    res.n_preemptees) {
		if (!*preemptee_job_list)
			*preemptee_job_list = list_create(NULL);
		for (size_t i = 0; i < res.n_preemptees; i++) {
			job_record_t *p = find_job_record(res.preemptees[i]);
			if (p)
				list_append(*preemptee_job_list, p);
		}
	}
	if (slurm_conf.debug_flags & DEBUG_FLAG_SELECT_TYPE) {
		verbose("%s: %pJ mode %u: the plugin chose %s (%u CPUs)", SHIM,
			job_ptr, mode, job_ptr->job_resrcs && (base == SELECT_MODE_RUN_NOW) ?
			job_ptr->job_resrcs->nodes : "", res.resources.ncpus);
		if (job_ptr->job_resrcs && (base == SELECT_MODE_RUN_NOW))
			log_job_resources(job_ptr);
	}
	api->swasm_job_test_result_free(&res);
	return SLURM_SUCCESS;
}

/* ---- the component's tables ---- */

/* job-begin of a running or suspended job the component does not hold. */
static void _begin(job_record_t *job_ptr)
{
	swasm_error err = SWASM_ERROR_INIT;
	arena_t arena = { 0 };
	swasm_job job;

	if (!job_ptr->job_resrcs || idmap_find(&known_jobs, job_ptr->job_id))
		return;
	if (!records_job(&arena, job_ptr, true, &job)) {
		arena_free(&arena);
		return;
	}
	_network(job_ptr);
	if (api->swasm_select_job_begin(plugin, &job, &err)) {
		_failed("job-begin", job_ptr, &err);
	} else {
		idmap_get(&known_jobs, job_ptr->job_id);
		if (IS_JOB_SUSPENDED(job_ptr) &&
		    api->swasm_select_job_suspend(plugin, &job,
						  job_ptr->priority == 0, &err))
			_failed("job-suspend", job_ptr, &err);
	}
	arena_free(&arena);
}

/* Calls `call` with the job translated, when the component holds it. */
static void _job_call(job_record_t *job_ptr, const char *what, bool flag,
		      int32_t (*call)(const swasm_select_plugin *,
				      const swasm_job *, bool, swasm_error *))
{
	swasm_error err = SWASM_ERROR_INIT;
	arena_t arena = { 0 };
	swasm_job job;

	if (!plugin || !idmap_find(&known_jobs, job_ptr->job_id))
		return;
	if (records_job(&arena, job_ptr, true, &job) &&
	    call(plugin, &job, flag, &err))
		_failed(what, job_ptr, &err);
	arena_free(&arena);
}

EXPORT extern int select_p_select_nodeinfo_set(job_record_t *job_ptr)
{
	int rc = BK(select_p_select_nodeinfo_set)(job_ptr);

	if ((rc == SLURM_SUCCESS) && plugin && plugin_ready &&
	    (IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr))) {
		_begin(job_ptr);
		_compare_nodes(job_ptr, "job-begin");
	}
	return rc;
}

EXPORT extern int select_p_job_fini(job_record_t *job_ptr)
{
	int rc = BK(select_p_job_fini)(job_ptr);

	if (plugin && idmap_find(&known_jobs, job_ptr->job_id)) {
		swasm_error err = SWASM_ERROR_INIT;
		arena_t arena = { 0 };
		swasm_job job;

		_network(job_ptr);
		if (records_job(&arena, job_ptr, true, &job) &&
		    api->swasm_select_job_fini(plugin, &job, &err))
			_failed("job-fini", job_ptr, &err);
		arena_free(&arena);
		idmap_remove(&known_jobs, job_ptr->job_id);
		_compare_nodes(job_ptr, "job-fini");
	}
	return rc;
}

EXPORT extern int select_p_job_suspend(job_record_t *job_ptr, bool indf_susp)
{
	int rc = BK(select_p_job_suspend)(job_ptr, indf_susp);

	_job_call(job_ptr, "job-suspend", indf_susp,
		  api ? api->swasm_select_job_suspend : NULL);
	return rc;
}

EXPORT extern int select_p_job_resume(job_record_t *job_ptr, bool indf_susp)
{
	int rc = BK(select_p_job_resume)(job_ptr, indf_susp);

	_job_call(job_ptr, "job-resume", indf_susp,
		  api ? api->swasm_select_job_resume : NULL);
	return rc;
}

EXPORT extern int select_p_job_resized(job_record_t *job_ptr,
				       node_record_t *node_ptr)
{
	int rc = BK(select_p_job_resized)(job_ptr, node_ptr);

	if (plugin && idmap_find(&known_jobs, job_ptr->job_id)) {
		swasm_error err = SWASM_ERROR_INIT;
		arena_t arena = { 0 };
		swasm_job job;

		if (records_job(&arena, job_ptr, true, &job) &&
		    api->swasm_select_job_resized(plugin, &job, node_ptr->index,
						  &err))
			_failed("job-resized", job_ptr, &err);
		arena_free(&arena);
	}
	return rc;
}

EXPORT extern int select_p_job_expand(job_record_t *from_job_ptr,
				      job_record_t *to_job_ptr)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_job_resources out = { 0 };
	arena_t arena = { 0 };
	swasm_job from, to;
	int rc;

	/* the component sees both jobs as they were before the merge */
	if (plugin && plugin_ready &&
	    (!records_job(&arena, from_job_ptr, true, &from) ||
	     !records_job(&arena, to_job_ptr, true, &to))) {
		arena_free(&arena);
		return SLURM_ERROR;
	}
	rc = BK(select_p_job_expand)(from_job_ptr, to_job_ptr);
	if ((rc == SLURM_SUCCESS) && plugin && plugin_ready) {
		if (api->swasm_select_job_expand(plugin, &from, &to, &out, &err))
			_failed("job-expand", to_job_ptr, &err);
		else
			api->swasm_job_resources_free(&out);
		idmap_remove(&known_jobs, from_job_ptr->job_id);
		_compare_nodes(to_job_ptr, "job-expand");
	}
	arena_free(&arena);
	return rc;
}

EXPORT extern int select_p_reconfigure(void)
{
	int rc = BK(select_p_reconfigure)();
	swasm_error err = SWASM_ERROR_INIT;
	swasm_select_config config;
	arena_t arena = { 0 };
	swasm_job *running;
	size_t n_running;
	bool replaced = false;

	if ((rc != SLURM_SUCCESS) || !plugin || !plugin_ready)
		return rc;
	/* The component the host configuration names now, put in place if it
	 * changed (the replaced one on probation beside it); a reload that
	 * cannot be made is logged and the serving component goes on. */
	if (api->swasm_select_reload(plugin, &replaced, &err))
		_failed("reload", NULL, &err);
	else if (replaced)
		info("%s: reloaded the component the host configuration names",
		     SHIM);
	records_config(&arena, &config);
	running = _running_jobs(&arena, &n_running);
	if (api->swasm_select_reconfigure(plugin, &config, running, n_running,
					  &err)) {
		_failed("reconfigure", NULL, &err);
		rc = SLURM_ERROR;
	} else {
		idmap_clear(&known_jobs, NULL, NULL);
		for (size_t i = 0; i < n_running; i++)
			idmap_get(&known_jobs, running[i].job_id);
	}
	arena_free(&arena);
	return rc;
}

/* The bookkeeping's answers: SELECT_CR_PLUGIN is SELECT_TYPE_CONS_TRES
 * under cons_tres's (gres/mps and --gpus* need it), 0 under linear's (as
 * select/linear: slurmctld then gives jobs whole nodes). */
EXPORT extern int select_p_get_info_from_plugin(enum select_plugindata_info info,
						job_record_t *job_ptr,
						void *data)
{
	return BK(select_p_get_info_from_plugin)(info, job_ptr, data);
}

EXPORT extern int select_p_job_begin(job_record_t *job_ptr)
{
	int rc = BK(select_p_job_begin)(job_ptr);

	/* select/linear commits here (cons_tres in nodeinfo_set) */
	if ((rc == SLURM_SUCCESS) && linear_mode && plugin && plugin_ready) {
		_begin(job_ptr);
		_compare_nodes(job_ptr, "job-begin");
	}
	return rc;
}

/* ---- readiness and steps: the bookkeeping's, then the component's ---- */

/*
 * Callers of select_p_job_ready hold only the job read lock (proc_req.c
 * _slurm_rpc_job_ready), so several may run at once; the decisions that
 * also sync node states hold the job write lock. This serialises the
 * readiness checks among themselves.
 */
static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The bookkeeping's answer (its node power and boot states), and not ready
 * while the component says so for a job it holds (select/cray_aries while
 * the job's node health check runs). The component is given the node
 * states first, as before a decision (a node that powered up since is
 * ready to it too). A failed call leaves the bookkeeping's answer.
 */
EXPORT extern int select_p_job_ready(job_record_t *job_ptr)
{
	int rc = BK(select_p_job_ready)(job_ptr);
	swasm_error err = SWASM_ERROR_INIT;
	arena_t arena = { 0 };
	swasm_job job;
	bool ready = true;

	if ((rc <= 0) || !plugin || !plugin_ready)
		return rc;
	/* the sync may give the component a new node table, which rewrites
	 * known_jobs: look the job up under the same lock */
	slurm_mutex_lock(&ready_lock);
	_sync_node_states();
	if (idmap_find(&known_jobs, job_ptr->job_id) &&
	    records_job(&arena, job_ptr, true, &job)) {
		if (api->swasm_select_job_ready(plugin, &job, &ready, &err))
			_failed("job-ready", job_ptr, &err);
		else if (!ready)
			rc = 0;
	}
	slurm_mutex_unlock(&ready_lock);
	arena_free(&arena);
	return rc;
}

EXPORT extern int select_p_job_signal(job_record_t *job_ptr, int signal)
{
	return BK(select_p_job_signal)(job_ptr, signal);
}

/*
 * The nodes the component lets the job's next step use (its select-steps
 * step-avail-nodes, select/cray_aries's used blades): set as *avail_nodes,
 * which step_mgr.c _pick_step_nodes intersects with its candidates; then
 * the bookkeeping's pick (linear's and cons_tres's: none, slurmctld
 * picks). A failed call restricts nothing.
 */
EXPORT extern bitstr_t *select_p_step_pick_nodes(job_record_t *job_ptr,
						 select_jobinfo_t *jobinfo,
						 uint32_t node_count,
						 bitstr_t **avail_nodes)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_bitmap avail = { 0 };
	arena_t arena = { 0 };
	bool restricted = false;
	swasm_job job;

	if (plugin && avail_nodes && !*avail_nodes &&
	    idmap_find(&known_jobs, job_ptr->job_id) &&
	    records_job(&arena, job_ptr, true, &job)) {
		if (api->swasm_select_step_avail_nodes(plugin, &job,
						       &restricted, &avail,
						       &err)) {
			_failed("step-avail-nodes", job_ptr, &err);
		} else if (restricted) {
			*avail_nodes = bit_alloc(node_record_count);
			_set_nodes(*avail_nodes, &avail);
			api->swasm_bitmap_free(&avail);
		}
	}
	arena_free(&arena);
	return BK(select_p_step_pick_nodes)(job_ptr, jobinfo, node_count,
					    avail_nodes);
}

/* A step of a job the component holds, as the select-steps and select
 * step functions take it (the controller's view: no node of its own). */
static void _step(step_record_t *step_ptr, swasm_step *s)
{
	memset(s, 0, sizeof(*s));
	s->job_id = step_ptr->step_id.job_id;
	s->step_id = step_ptr->step_id.step_id;
	s->user_id = step_ptr->job_ptr->user_id;
	s->group_id = step_ptr->job_ptr->group_id;
	s->node_name = "";
	s->cpu_bind = "";
	s->cpus_per_task = step_ptr->cpus_per_task;
	if (step_ptr->step_layout)
		s->total_tasks = step_ptr->step_layout->task_cnt;
}

/* The bookkeeping's, then the component's select-steps step-start with
 * the step's nodes (select/cray_aries: a counter step claims its blades). */
EXPORT extern int select_p_step_start(step_record_t *step_ptr)
{
	int rc = BK(select_p_step_start)(step_ptr);
	job_record_t *job_ptr = step_ptr->job_ptr;
	swasm_error err = SWASM_ERROR_INIT;
	arena_t arena = { 0 };
	swasm_bitmap nodes;
	swasm_job job;

	if (!plugin || !step_ptr->step_node_bitmap ||
	    !idmap_find(&known_jobs, job_ptr->job_id))
		return rc;
	if (records_job(&arena, job_ptr, true, &job)) {
		nodes = swasm_records_bitmap(step_ptr->step_node_bitmap);
		_network(job_ptr);
		if (api->swasm_select_step_start(plugin, &job,
						 step_ptr->step_id.step_id,
						 &nodes, &err))
			_failed("step-start", job_ptr, &err);
	}
	arena_free(&arena);
	return rc;
}

/* The bookkeeping's, then the component's step-finish (select/cray_aries
 * gives the step's blades back, or runs its node health check first). */
EXPORT extern int select_p_step_finish(step_record_t *step_ptr,
				       bool killing_step)
{
	int rc = BK(select_p_step_finish)(step_ptr, killing_step);
	swasm_error err = SWASM_ERROR_INIT;
	swasm_step step;

	if (!plugin || !idmap_find(&known_jobs, step_ptr->job_ptr->job_id))
		return rc;
	_step(step_ptr, &step);
	if (api->swasm_select_step_finish(plugin, &step, killing_step, &err))
		_failed("step-finish", step_ptr->job_ptr, &err);
	return rc;
}

/* ---- the bookkeeping's own functions ---- */

EXPORT extern int select_p_select_nodeinfo_pack(select_nodeinfo_t *nodeinfo,
						buf_t *buffer,
						uint16_t protocol_version)
{
	return BK(select_p_select_nodeinfo_pack)(nodeinfo, buffer,
						 protocol_version);
}

EXPORT extern int select_p_select_nodeinfo_unpack(select_nodeinfo_t **nodeinfo,
						  buf_t *buffer,
						  uint16_t protocol_version)
{
	return BK(select_p_select_nodeinfo_unpack)(nodeinfo, buffer,
						   protocol_version);
}

EXPORT extern select_nodeinfo_t *select_p_select_nodeinfo_alloc(void)
{
	return BK(select_p_select_nodeinfo_alloc)();
}

EXPORT extern int select_p_select_nodeinfo_free(select_nodeinfo_t *nodeinfo)
{
	return BK(select_p_select_nodeinfo_free)(nodeinfo);
}

EXPORT extern int select_p_select_nodeinfo_set_all(void)
{
	return BK(select_p_select_nodeinfo_set_all)();
}

EXPORT extern int select_p_select_nodeinfo_get(select_nodeinfo_t *nodeinfo,
					       enum select_nodedata_type dinfo,
					       enum node_states state,
					       void *data)
{
	return BK(select_p_select_nodeinfo_get)(nodeinfo, dinfo, state, data);
}

EXPORT extern select_jobinfo_t *select_p_select_jobinfo_alloc(void)
{
	return BK(select_p_select_jobinfo_alloc)();
}

EXPORT extern int select_p_select_jobinfo_free(select_jobinfo_t *jobinfo)
{
	return BK(select_p_select_jobinfo_free)(jobinfo);
}

EXPORT extern int select_p_select_jobinfo_set(select_jobinfo_t *jobinfo,
					      enum select_jobdata_type data_type,
					      void *data)
{
	return BK(select_p_select_jobinfo_set)(jobinfo, data_type, data);
}

EXPORT extern int select_p_select_jobinfo_get(select_jobinfo_t *jobinfo,
					      enum select_jobdata_type data_type,
					      void *data)
{
	return BK(select_p_select_jobinfo_get)(jobinfo, data_type, data);
}

EXPORT extern select_jobinfo_t *select_p_select_jobinfo_copy(
	select_jobinfo_t *jobinfo)
{
	return BK(select_p_select_jobinfo_copy)(jobinfo);
}

EXPORT extern int select_p_select_jobinfo_pack(select_jobinfo_t *jobinfo,
					       buf_t *buffer,
					       uint16_t protocol_version)
{
	return BK(select_p_select_jobinfo_pack)(jobinfo, buffer,
						protocol_version);
}

EXPORT extern int select_p_select_jobinfo_unpack(select_jobinfo_t **jobinfo,
						 buf_t *buffer,
						 uint16_t protocol_version)
{
	return BK(select_p_select_jobinfo_unpack)(jobinfo, buffer,
						  protocol_version);
}

EXPORT extern char *select_p_select_jobinfo_sprint(select_jobinfo_t *jobinfo,
						   char *buf, size_t size,
						   int mode)
{
	return BK(select_p_select_jobinfo_sprint)(jobinfo, buf, size, mode);
}

EXPORT extern char *select_p_select_jobinfo_xstrdup(select_jobinfo_t *jobinfo,
						    int mode)
{
	return BK(select_p_select_jobinfo_xstrdup)(jobinfo, mode);
}

EXPORT extern int select_p_update_node_config(int index)
{
	return BK(select_p_update_node_config)(index);
}

/* ---- reservations ---- */

EXPORT extern bitstr_t *select_p_resv_test(resv_desc_msg_t *resv_desc_ptr,
					   uint32_t node_cnt,
					   bitstr_t *avail_node_bitmap,
					   bitstr_t **core_bitmap)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_reservation_request req = { 0 };
	swasm_reservation_result res = { 0 };
	swasm_bitmap exc;
	uint32_t *per = NULL;
	bitstr_t *picked;
	size_t n = 0;

	if (!plugin || !plugin_ready)
		return NULL;
	_sync_node_states();
	req.node_count = node_cnt;
	if (resv_desc_ptr->core_cnt) {
		while (resv_desc_ptr->core_cnt[n])
			n++;
		if (n == 1) {
			req.core_count = resv_desc_ptr->core_cnt[0];
		} else if (n > 1) {
			per = xcalloc(n, sizeof(uint32_t));
			for (size_t i = 0; i < n; i++) {
				per[i] = resv_desc_ptr->core_cnt[i];
				req.core_count += per[i];
			}
			req.cores_per_node = per;
			req.n_cores_per_node = n;
		}
	}
	req.available = swasm_records_bitmap(avail_node_bitmap);
	if (core_bitmap && *core_bitmap) {
		exc = swasm_records_bitmap(*core_bitmap);
		req.excluded_cores = &exc;
	}
	req.flags = resv_desc_ptr->flags;
	if (api->swasm_select_resv_test(plugin, &req, &res, &err)) {
		log_flag(SELECT_TYPE, "%s: resv-test: %s", SHIM,
			 err.message ? err.message : "unknown error");
		api->swasm_error_clear(&err);
		xfree(per);
		return NULL;
	}
	xfree(per);
	picked = bit_alloc(bit_size(avail_node_bitmap));
	for (uint32_t i = 0; i < res.nodes.len; i++) {
		if (!(res.nodes.words[i / 64] & (UINT64_C(1) << (i % 64))))
			continue;
		if ((i >= bit_size(picked)) || !bit_test(avail_node_bitmap, i)) {
			error("%s: resv-test: the plugin's answer is not applied: it names a node that was not available",
			      SHIM);
			FREE_NULL_BITMAP(picked);
			api->swasm_reservation_result_free(&res);
			return NULL;
		}
		bit_set(picked, i);
	}
	if (core_bitmap && res.cores) {
		bitstr_t *cores = bit_alloc(res.cores->len);
		for (uint32_t i = 0; i < res.cores->len; i++) {
			if (res.cores->words[i / 64] & (UINT64_C(1) << (i % 64)))
				bit_set(cores, i);
		}
		FREE_NULL_BITMAP(*core_bitmap);
		*core_bitmap = cores;
	}
	api->swasm_reservation_result_free(&res);
	return picked;
}
