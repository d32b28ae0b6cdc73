/*
 * task_wasm.c: the task/wasm plugin of Slurm 22.05: task launch and CPU
 * binding decided by a sandboxed WebAssembly task component
 * (task_affinity.wasm, task_none.wasm or a site's own), run by
 * libslurm_wasm.so. Configure with TaskPlugin=task/wasm and the host
 * configuration's [plugins.task] slot (see common/swasm_shim.h for where
 * the library and the host configuration are found).
 *
 * Where each function runs (src/slurmd/common/task_plugin.c, and the
 * callers in src/slurmd/slurmd/req.c and src/slurmd/slurmstepd/mgr.c):
 *   - slurmd, in its RPC threads, as root: task_p_slurmd_batch_request and
 *     task_p_slurmd_launch_request (the component's binding is written back
 *     into the request before it goes to slurmstepd, as task/affinity's
 *     lllp_distribution does), task_p_slurmd_suspend_job and _resume_job;
 *   - slurmstepd's parent, as root: task_p_pre_setuid, then for each task
 *     after its fork and before its exec task_p_set_affinity, which is the
 *     component's privileged per-task hook `pre-launch-priv` (binding goes
 *     through its `cpuset` capability, on the task's pid), then
 *     task_p_post_term and task_p_post_step;
 *   - slurmstepd's message thread: task_p_add_pid;
 *   - the forked task, as the job's user, just before exec:
 *     task_p_pre_launch (the component's `pre-launch`, bounded by fuel and
 *     by the call deadline: the library restarts its epoch ticker in a
 *     forked process, so a component that loops there cannot leave an
 *     un-exec'd child that proctrack never kills).
 *
 * Start-up. slurmd loads task plugins before it daemonizes, so the
 * library's runtime (engine, ticker thread) must not start in init(). In
 * slurmd, init() opens the host configuration and the slot (cheap checks:
 * the file exists, the slot is a task slot) and then loads the component in
 * a forked child, which compiles it into the compiled-component cache,
 * checks its kind and contract, and runs its init; a failure there is one
 * error() line from the child, init() fails and slurmd stops ("failed to
 * initialize task plugin"). The parent starts the runtime at its first
 * call; slurmstepd at its first hook. A component that cannot start later
 * fails every hook with the reason in the log: a step fails, nothing else
 * runs in its place.
 *
 * When the component fails a call, the host's failure policy (restart,
 * fail, fallback) has already acted; the hook logs the message and fails
 * as a C plugin's would (a launch request with the component's code and
 * message, which srun prints).
 *
 * Processes other than slurmd and slurmstepd do not load task plugins; if
 * one does, the library is never opened there and every hook does nothing.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "slurm/slurm_errno.h"
#include "src/common/bitstring.h"
#include "src/common/env.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/slurm_cred.h"
#include "src/common/slurm_protocol_api.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmd/slurmd/slurmd.h"
#include "src/slurmd/slurmstepd/slurmstepd_job.h"

#include "swasm_records.h"
#include "swasm_shim.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT const char plugin_name[] =
	"Task WASM plugin (a sandboxed WebAssembly task component)";
EXPORT const char plugin_type[] = "task/wasm";
EXPORT const uint32_t plugin_version = SLURM_VERSION_NUMBER;

#define SHIM "task/wasm"

static const swasm_api_t *api;
static swasm_host *host;
static swasm_task_plugin *plugin;

/* Room for the core indices of a step's step_alloc_cores, read before the
 * node's own count is known to cover them. */
#define MAX_NODE_CORES 65536

/* The step's cores as last read (see _step), and the text they came from. */
static bitstr_t *step_cores;
static char *step_cores_text;

/* The component's start (load, identity, init), once per process: in the
 * process that makes the first call, after slurmd daemonized. */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;
static bool start_tried;
static int start_rc = SLURM_ERROR;

/* ---- start-up ---- */

/* The component's init() argument: the cluster settings and this node. */
static void _config(arena_t *arena, swasm_task_config *out)
{
	memset(out, 0, sizeof(*out));
	swasm_records_cluster(arena, &out->cluster, 0);
	out->node_name = conf ? conf->node_name : NULL;
}

/* Loads the component, names it in the log and runs its init. Returns
 * SLURM_SUCCESS or, after one error() line, SLURM_ERROR. */
static int _load_and_init(void)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_plugin_identity id = { 0 };
	swasm_task_config config;
	arena_t arena = { 0 };
	int rc = SLURM_SUCCESS;

	if (api->swasm_task_identity(plugin, &id, &err)) {
		error("%s: %s", SHIM, err.message ? err.message : "unknown error");
		api->swasm_error_clear(&err);
		return SLURM_ERROR;
	}
	verbose("%s: running %s (%s, contract %s)", SHIM, id.plugin_type,
		id.plugin_name, id.contract_version);
	api->swasm_plugin_identity_free(&id);

	_config(&arena, &config);
	if (api->swasm_task_init(plugin, &config, &err)) {
		error("%s: the plugin's init failed: %s", SHIM,
		      err.message ? err.message : "unknown error");
		api->swasm_error_clear(&err);
		rc = SLURM_ERROR;
	}
	arena_free(&arena);
	return rc;
}

/* Starts the component in this process on first use; SLURM_SUCCESS when it
 * runs. Every hook calls it first. */
static int _start(void)
{
	int rc;

	if (!plugin)
		return SLURM_ERROR;
	slurm_mutex_lock(&start_lock);
	if (!start_tried) {
		start_tried = true;
		start_rc = _load_and_init();
	}
	rc = start_rc;
	slurm_mutex_unlock(&start_lock);
	return rc;
}

/*
 * slurmd's start-up check: the component loads (compiled into the cache,
 * its kind and contract checked) and its init succeeds, in a child process,
 * so that slurmd itself starts no thread before it daemonizes. The child
 * logs what is wrong; the parent only learns that it failed.
 */
static int _check_in_child(void)
{
	pid_t pid;
	int status = 0;

	if ((pid = fork()) < 0) {
		error("%s: cannot fork to check the plugin: %m", SHIM);
		return SLURM_ERROR;
	}
	if (pid == 0)
		_exit(_load_and_init() == SLURM_SUCCESS ? 0 : 1);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			error("%s: waiting for the plugin check: %m", SHIM);
			return SLURM_ERROR;
		}
	}
	if (WIFEXITED(status) && (WEXITSTATUS(status) == 0))
		return SLURM_SUCCESS;
	if (WIFSIGNALED(status))
		error("%s: the plugin check died of signal %d", SHIM,
		      WTERMSIG(status));
	return SLURM_ERROR;
}

EXPORT extern int init(void)
{
	swasm_error err = SWASM_ERROR_INIT;

	if (!running_in_slurmd() && !running_in_slurmstepd()) {
		debug("%s: not in slurmd or slurmstepd: the library is not loaded",
		      SHIM);
		return SLURM_SUCCESS;
	}
	if (!(api = swasm_shim_api(SHIM, plugin_type)))
		return SLURM_ERROR;
	if (!(host = swasm_shim_open_host(SHIM, api, slurm_conf.slurm_conf)))
		return SLURM_ERROR;
	if (!(plugin = api->swasm_task_open(host, NULL, &err))) {
		error("%s: %s", SHIM, err.message ? err.message : "unknown error");
		api->swasm_error_clear(&err);
		goto fail;
	}
	if (running_in_slurmd() && (_check_in_child() != SLURM_SUCCESS))
		goto fail;
	debug("%s loaded", plugin_name);
	return SLURM_SUCCESS;

fail:
	if (plugin)
		api->swasm_task_close(plugin);
	plugin = NULL;
	api->swasm_host_close(host);
	host = NULL;
	return SLURM_ERROR;
}

/* The component's fini, where it started. */
EXPORT extern int fini(void)
{
	swasm_error err = SWASM_ERROR_INIT;

	FREE_NULL_BITMAP(step_cores);
	xfree(step_cores_text);
	if (!plugin)
		return SLURM_SUCCESS;
	if (start_tried && (start_rc == SLURM_SUCCESS) &&
	    api->swasm_task_fini(plugin, &err)) {
		error("%s: fini failed: %s", SHIM,
		      err.message ? err.message : "unknown error");
		api->swasm_error_clear(&err);
	}
	api->swasm_task_close(plugin);
	api->swasm_host_close(host);
	plugin = NULL;
	host = NULL;
	return SLURM_SUCCESS;
}

/* ---- errors ---- */

/* Logs a failed call; returns the component's Slurm code (SLURM_ERROR for
 * faults) and sets errno, and with `err_msg` gives the caller the
 * component's own message (as a C plugin would), or for a fault the
 * library's. Clears err. */
static int _failed(const char *function, swasm_error *err, char **err_msg)
{
	int rc = err->code ? err->code : SLURM_ERROR;
	const char *msg = err->message ? err->message : "unknown error";

	error("%s: %s failed: %s", SHIM, function, msg);
	if (err_msg)
		xstrfmtcat(*err_msg, "%s",
			   err->plugin_message ? err->plugin_message : msg);
	api->swasm_error_clear(err);
	/* for the caller's own "%m" (mgr.c: "task_g_set_affinity: %m"): the
	 * plugin's code, or for a fault (the sandbox ended the call)
	 * "Operation canceled" */
	errno = (rc > 0) ? rc : ECANCELED;
	return rc;
}

/* ---- slurmd: the launch requests ---- */

/*
 * This node's place in a credential: its first bit in the core bitmaps and
 * its sockets and cores (as dist_tasks.c's _get_local_node_info and
 * slurm_cred.c's format_core_allocs walk sock_core_rep_count). False when
 * the node is not in the credential's hostlist.
 */
static bool _node_in_cred(slurm_cred_arg_t *arg, const char *node_name,
			  int *start, uint16_t *sockets, uint16_t *cores)
{
	int inx = nodelist_find(arg->job_hostlist, node_name);
	int first = 0;

	if ((inx < 0) || (inx >= (int) arg->job_nhosts))
		return false;
	for (int i = 0; inx >= 0; i++) {
		int per = arg->sockets_per_node[i] * arg->cores_per_socket[i];
		if (inx < (int) arg->sock_core_rep_count[i]) {
			*start = first + inx * per;
			*sockets = arg->sockets_per_node[i];
			*cores = arg->cores_per_socket[i];
			return true;
		}
		first += per * arg->sock_core_rep_count[i];
		inx -= arg->sock_core_rep_count[i];
	}
	return false;
}

/* The component's binding written into a request's cpu_bind_type and
 * cpu_bind, its environment into `env` (when given) and its messages to
 * the log. */
static void _apply(const swasm_cpu_binding *b, uint16_t *cpu_bind_type,
		   char **cpu_bind, char ***env)
{
	*cpu_bind_type = b->cpu_bind_type;
	xfree(*cpu_bind);
	if (b->cpu_bind && b->cpu_bind[0])
		*cpu_bind = xstrdup(b->cpu_bind);
	for (size_t i = 0; env && (i < b->n_env); i++)
		env_array_overwrite(env, b->env[i].key, b->env[i].value);
	for (size_t i = 0; i < b->n_messages; i++)
		verbose("%s: %s", SHIM, b->messages[i]);
}

/*
 * The batch script's binding (task/affinity's batch_bind): this node's
 * cores in the job from the credential, the binding written back into the
 * request. Slurm ignores the return code; a failure leaves the request as
 * it was, and is logged.
 */
EXPORT extern int task_p_slurmd_batch_request(batch_job_launch_msg_t *req)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_batch_request r = { 0 };
	swasm_cpu_binding out = { 0 };
	slurm_cred_arg_t *arg;
	arena_t arena = { 0 };
	uint16_t sockets = 0, cores = 0;
	int start = 0, rc;

	if (_start())
		return SLURM_ERROR;
	arg = slurm_cred_get_args(req->cred);
	if (!_node_in_cred(arg, conf->node_name, &start, &sockets, &cores)) {
		error("%s: node %s is not in the credential of job %u (%s)",
		      SHIM, conf->node_name, req->job_id, arg->job_hostlist);
		slurm_cred_unlock_args(req->cred);
		return SLURM_ERROR;
	}
	r.job_id = req->job_id;
	r.user_id = req->uid;
	r.node_name = conf->node_name;
	r.job_cores = swasm_records_bitmap_slice(&arena, arg->job_core_bitmap,
						 start, sockets * cores);
	slurm_cred_unlock_args(req->cred);
	r.sockets = sockets;
	r.cores_per_socket = cores;
	r.threads_per_core_conf = conf->threads;
	r.cpus_conf = conf->cpus;
	r.cpu_bind_type = req->cpu_bind_type;
	r.cpu_bind = req->cpu_bind;

	if (api->swasm_task_slurmd_batch_request(plugin, &r, &out, &err)) {
		rc = _failed("slurmd-batch-request", &err, NULL);
	} else {
		_apply(&out, &req->cpu_bind_type, &req->cpu_bind, NULL);
		api->swasm_cpu_binding_free(&out);
		rc = SLURM_SUCCESS;
	}
	arena_free(&arena);
	return rc;
}

/*
 * A step's binding on this node (task/affinity's lllp_distribution): the
 * request with this node's cores in the step and the job from the
 * credential, and the node's threads and CPUs from slurmd's configuration;
 * the component's binding written back into the request (cpu_bind_type,
 * cpu_bind, and variables it gives for every task into the step's
 * environment). A refusal (ESLURMD_CPU_BIND_ERROR, ...) fails the launch
 * with the component's code and message, which srun prints.
 */
EXPORT extern int task_p_slurmd_launch_request(launch_tasks_request_msg_t *req,
					       uint32_t node_id,
					       char **err_msg)
{
	swasm_error err = SWASM_ERROR_INIT;
	swasm_launch_request r = { 0 };
	swasm_cpu_binding out = { 0 };
	swasm_key_value *env;
	slurm_cred_arg_t *arg;
	arena_t arena = { 0 };
	uint16_t sockets = 0, cores = 0;
	int start = 0, rc;

	if (_start()) {
		if (err_msg)
			xstrfmtcat(*err_msg, "%s: the task plugin could not start (see slurmd's log)",
				   SHIM);
		return SLURM_ERROR;
	}
	arg = slurm_cred_get_args(req->cred);
	if (!_node_in_cred(arg, conf->node_name, &start, &sockets, &cores)) {
		error("%s: node %s is not in the credential of %ps (%s)", SHIM,
		      conf->node_name, &req->step_id, arg->job_hostlist);
		if (err_msg)
			xstrfmtcat(*err_msg, "missing node %s in job credential",
				   conf->node_name);
		slurm_cred_unlock_args(req->cred);
		return ESLURMD_CPU_LAYOUT_ERROR;
	}
	r.step_cores = swasm_records_bitmap_slice(&arena, arg->step_core_bitmap,
						  start, sockets * cores);
	r.job_cores = swasm_records_bitmap_slice(&arena, arg->job_core_bitmap,
						 start, sockets * cores);
	slurm_cred_unlock_args(req->cred);

	r.job_id = req->step_id.job_id;
	r.step_id = req->step_id.step_id;
	r.user_id = req->uid;
	r.group_id = req->gid;
	r.node_count = req->nnodes;
	r.node_id = node_id;
	r.node_name = conf->node_name;
	r.total_tasks = req->ntasks;
	r.global_task_ids = req->global_task_ids[node_id];
	r.n_global_task_ids = req->tasks_to_launch[node_id];
	r.cpus_per_task = req->cpus_per_task;
	r.cpu_bind_type = req->cpu_bind_type;
	r.cpu_bind = req->cpu_bind;
	r.task_dist = req->task_dist;
	/* 22.05's launch request carries no plane size (task/affinity lays
	 * out a plane distribution as block, dist_tasks.c) */
	r.plane_size = 0;
	r.ntasks_per_board = req->ntasks_per_board;
	r.ntasks_per_socket = req->ntasks_per_socket;
	r.ntasks_per_core = req->ntasks_per_core;
	r.threads_per_core = (req->threads_per_core == NO_VAL16) ?
		0 : req->threads_per_core;
	r.overcommit = req->flags & LAUNCH_OVERCOMMIT;
	r.sockets = sockets;
	r.cores_per_socket = cores;
	r.threads_per_core_conf = conf->threads;
	r.cpus_conf = conf->cpus;
	r.has_job_core_spec = (req->job_core_spec != NO_VAL16);
	r.job_core_spec = r.has_job_core_spec ? req->job_core_spec : 0;
	r.mem_bind_type = req->mem_bind_type;
	r.mem_bind = req->mem_bind;
	env = arena_alloc(&arena, (req->envc + 1) * sizeof(*env));
	for (uint32_t i = 0; i < req->envc && req->env && req->env[i]; i++) {
		char *eq = strchr(req->env[i], '='), *key;
		if (!eq)
			continue;
		key = arena_strdup(&arena, req->env[i]);
		key[eq - req->env[i]] = '\0';
		env[r.n_env].key = key;
		env[r.n_env].value = eq + 1;
		r.n_env++;
	}
	r.env = env;
	r.interactive = (req->step_id.step_id == SLURM_INTERACTIVE_STEP);

	if (api->swasm_task_slurmd_launch_request(plugin, &r, &out, &err)) {
		rc = _failed("slurmd-launch-request", &err, err_msg);
	} else {
		_apply(&out, &req->cpu_bind_type, &req->cpu_bind, &req->env);
		req->envc = envcount(req->env);
		api->swasm_cpu_binding_free(&out);
		rc = SLURM_SUCCESS;
	}
	arena_free(&arena);
	return rc;
}

/* A job of this node is being suspended (slurmd's _rpc_suspend_job). */
EXPORT extern int task_p_slurmd_suspend_job(uint32_t job_id)
{
	swasm_error err = SWASM_ERROR_INIT;

	if (_start())
		return SLURM_ERROR;
	if (api->swasm_task_slurmd_suspend_job(plugin, job_id, &err))
		return _failed("slurmd-suspend-job", &err, NULL);
	return SLURM_SUCCESS;
}

/* A job of this node resumed (after its processes were resumed). */
EXPORT extern int task_p_slurmd_resume_job(uint32_t job_id)
{
	swasm_error err = SWASM_ERROR_INIT;

	if (_start())
		return SLURM_ERROR;
	if (api->swasm_task_slurmd_resume_job(plugin, job_id, &err))
		return _failed("slurmd-resume-job", &err, NULL);
	return SLURM_SUCCESS;
}

/* ---- slurmstepd ---- */

/*
 * The step as the contract's record: this node's part of it, its binding
 * as slurmd rewrote it, its cores on this node (step_alloc_cores, which
 * slurmstepd formats from the credential: core indices of this node) and
 * the pids of the tasks forked so far.
 */
static void _step(arena_t *arena, stepd_step_rec_t *job, swasm_step *s)
{
	int ncores = conf ? conf->sockets * conf->cores : 0;
	uint32_t *pids;

	memset(s, 0, sizeof(*s));
	s->job_id = job->step_id.job_id;
	s->step_id = job->step_id.step_id;
	s->user_id = job->uid;
	s->group_id = job->gid;
	s->node_name = job->node_name;
	s->node_id = job->nodeid;
	s->local_tasks = job->node_tasks;
	s->total_tasks = job->ntasks;
	s->cpus_per_task = job->cpus_per_task;
	s->cpu_bind_type = job->cpu_bind_type;
	s->cpu_bind = job->cpu_bind;
	s->tres_freq = job->tres_freq;

	/* a slurmstepd serves one step: its cores are read once */
	if (!step_cores || xstrcmp(step_cores_text, job->step_alloc_cores)) {
		FREE_NULL_BITMAP(step_cores);
		xfree(step_cores_text);
		step_cores = bit_alloc(MAX(ncores, MAX_NODE_CORES));
		step_cores_text = xstrdup(job->step_alloc_cores);
		if (job->step_alloc_cores && job->step_alloc_cores[0] &&
		    bit_unfmt(step_cores, job->step_alloc_cores))
			error("%s: %ps: cannot read the step's cores \"%s\"",
			      SHIM, &job->step_id, job->step_alloc_cores);
	}
	if (bit_fls(step_cores) >= ncores)
		ncores = bit_fls(step_cores) + 1;
	s->cores = swasm_records_bitmap_slice(arena, step_cores, 0, ncores);

	pids = arena_alloc(arena, (job->node_tasks + 1) * sizeof(*pids));
	for (uint32_t i = 0; job->task && (i < job->node_tasks); i++)
		pids[i] = job->task[i] ? job->task[i]->pid : 0;
	s->task_pids = pids;
	s->n_task_pids = job->node_tasks;
}

/* Runs `call` on the step (and task) and logs a failure. */
#define STEP_CALL(function, call)                                             \
	do {                                                                  \
		swasm_error err = SWASM_ERROR_INIT;                           \
		arena_t arena = { 0 };                                        \
		swasm_step step;                                              \
		int rc = SLURM_SUCCESS;                                       \
		if (_start())                                                 \
			return SLURM_ERROR;                                   \
		_step(&arena, job, &step);                                    \
		if (call)                                                     \
			rc = _failed(function, &err, NULL);                   \
		arena_free(&arena);                                           \
		return rc;                                                    \
	} while (0)

/* In slurmstepd, as root, before privileges are dropped for the tasks. */
EXPORT extern int task_p_pre_setuid(stepd_step_rec_t *job)
{
	STEP_CALL("pre-setuid",
		  api->swasm_task_pre_setuid(plugin, &step, &err));
}

/* The contract has one privileged per-task hook, `pre-launch-priv`, which
 * task_p_set_affinity calls; like task/affinity's, this one does nothing. */
EXPORT extern int task_p_pre_set_affinity(stepd_step_rec_t *job,
					  uint32_t node_tid)
{
	return SLURM_SUCCESS;
}

/*
 * --cpu-bind=verbose: task/affinity prints its report of each task's
 * binding on the step's stderr from task_p_set_affinity
 * (task_slurm_chkaffinity in src/slurmd/common/task_plugin.c); the shim
 * prints there what the component logs at info level while it binds a task
 * of a verbose step. Lines arrive escaped (no control characters).
 */
static void _print_report(const char *line, void *arg)
{
	fprintf(stderr, "%s\n", line);
}

/*
 * The component's `pre-launch-priv` for task `node_tid`: in slurmstepd's
 * parent, as root, after the task forked and before it execs, with its
 * pid; binding through the `cpuset` capability. A failure fails the step's
 * launch (mgr.c: "task_g_set_affinity").
 */
EXPORT extern int task_p_set_affinity(stepd_step_rec_t *job, uint32_t node_tid)
{
	stepd_step_task_info_t *t = job->task[node_tid];
	swasm_task task = { .local_id = t->id, .global_id = t->gtid,
			    .pid = t->pid };
	swasm_error err = SWASM_ERROR_INIT;
	arena_t arena = { 0 };
	swasm_step step;
	int rc = SLURM_SUCCESS;

	if (_start())
		return SLURM_ERROR;
	_step(&arena, job, &step);
	if (job->cpu_bind_type & CPU_BIND_VERBOSE)
		swasm_shim_capture(_print_report, NULL);
	if (api->swasm_task_pre_launch_priv(plugin, &step, &task, &err))
		rc = _failed("pre-launch-priv", &err, NULL);
	swasm_shim_capture(NULL, NULL);
	arena_free(&arena);
	return rc;
}

/* Like task/affinity's, does nothing (see task_p_pre_set_affinity). */
EXPORT extern int task_p_post_set_affinity(stepd_step_rec_t *job,
					   uint32_t node_tid)
{
	return SLURM_SUCCESS;
}

/*
 * The component's `pre-launch`, in the forked task as the job's user, just
 * before exec (exec_task in mgr.c; job->envtp names the task). Bounded by
 * the call's fuel and deadline. A failure makes the task exit instead of
 * exec'ing.
 */
EXPORT extern int task_p_pre_launch(stepd_step_rec_t *job)
{
	swasm_task task = { .local_id = job->envtp->localid,
			    .global_id = job->envtp->procid,
			    .pid = getpid() };

	STEP_CALL("pre-launch",
		  api->swasm_task_pre_launch(plugin, &step, &task, &err));
}

/* A task ended (slurmstepd's parent). */
EXPORT extern int task_p_post_term(stepd_step_rec_t *job,
				   stepd_step_task_info_t *t)
{
	swasm_task task = { .local_id = t->id, .global_id = t->gtid,
			    .pid = t->pid };

	STEP_CALL("post-term",
		  api->swasm_task_post_term(plugin, &step, &task, &err));
}

/* Every task of the step ended. */
EXPORT extern int task_p_post_step(stepd_step_rec_t *job)
{
	STEP_CALL("post-step", api->swasm_task_post_step(plugin, &step, &err));
}

/* A process joined the step (slurmstepd's message thread, e.g. adopted by
 * pam_slurm_adopt). */
EXPORT extern int task_p_add_pid(pid_t pid)
{
	swasm_error err = SWASM_ERROR_INIT;

	if (_start())
		return SLURM_ERROR;
	if (api->swasm_task_add_pid(plugin, (uint32_t) pid, &err))
		return _failed("add-pid", &err, NULL);
	return SLURM_SUCCESS;
}
