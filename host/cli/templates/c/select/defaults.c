/*
 * defaults.c - what a select plugin keeps besides its policy, as the Rust
 * SDK's select::Managed and the Python slurm_plugin.select keep it: the
 * node table (node-init, node updates), the running and suspended jobs
 * with what they hold on each node (job-init, job-begin, job-fini,
 * job-suspend, job-resume, job-resized, reconfigure), select-nodeinfo
 * computed from those jobs and packed as Slurm 20.11 to 22.05 pack it
 * (select_p_select_nodeinfo_pack: pack16, pack64, packstr, packdouble),
 * an empty select-jobinfo, the state blob, and select/linear's defaults
 * where nothing is policy (src/plugins/select/linear/select_linear.c).
 * The tables are not in the state: after a restart they come back through
 * node-init and job-init, as in Slurm (read_config.c: read_slurm_conf).
 *
 * plugin.c reads the tables through the cluster_* functions below and
 * writes describe() and job_test(). Each contract function here is a weak
 * definition: write the same function in plugin.c and the linker takes
 * yours (a plugin that replaces one of the bookkeeping functions keeps the
 * tables itself). Each frees the arguments it owns (the bindings' rule).
 */
#include "select_plugin.h"
#include "slurm_plugin.h"

#define DEFAULT __attribute__((weak))

#define ESLURM_NODES_BUSY 2016
#define ESLURM_NOT_SUPPORTED 2036

/* What the tables keep of a node. */
struct node_rec {
	uint16_t cpus;
	uint32_t cores;		/* sockets x cores per socket */
	uint64_t memory;	/* RealMemory, MB */
	uint64_t tmp_disk;	/* MB */
	uint32_t flags;		/* node-state-flags */
};

/* What a job holds on one node. */
struct use {
	uint32_t node;
	uint16_t cpus;
	uint64_t memory;
};

/* A running or suspended job. */
struct job_rec {
	uint32_t id;
	int64_t end;		/* planned end */
	bool suspended;
	size_t n;
	struct use *use;
};

static struct node_rec *nodes;
static size_t n_nodes;
static struct job_rec *jobs;
static size_t n_jobs;
static bool initialised;
static int64_t now;

/* The select-nodeinfo resource: what a node has allocated. */
struct exports_slurm_plugin_select_select_nodeinfo_t {
	uint16_t cpus;
	uint64_t memory;
};

/* The select-jobinfo resource: nothing (select/linear's is NULL). */
struct exports_slurm_plugin_select_select_jobinfo_t {
	uint8_t unused;
};

/* Aborts when memory runs out: the host sees a trap. */
static void *must(void *p)
{
	if (!p)
		abort();
	return p;
}

/*
 * Whether the tables exist; otherwise fills err with "called before init"
 * and answers false. Also takes the clock for the call.
 */
static bool ready(slurm_plugin_types_plugin_error_t *err)
{
	if (!initialised)
		return slurm_plugin_fail(err, SLURM_ERROR, "select: called before init");
	now = slurm_plugin_clock_now();
	return true;
}

/* The clock when the current call began. */
int64_t cluster_now(void)
{
	return now;
}

/* Whether init() ran (and fini() did not since). */
bool cluster_initialised(void)
{
	return initialised;
}

/*
 * Node index's configured CPUs, cores, memory and TmpDisk; false when the
 * table has no such node.
 */
bool cluster_node(uint32_t index, uint16_t *cpus, uint32_t *cores,
		  uint64_t *memory, uint64_t *tmp_disk)
{
	if (index >= n_nodes)
		return false;
	*cpus = nodes[index].cpus;
	*cores = nodes[index].cores;
	*memory = nodes[index].memory;
	*tmp_disk = nodes[index].tmp_disk;
	return true;
}

/*
 * When node index is free: now when no job holds it, else the latest
 * planned end of its jobs (never before now); INT64_MAX while a suspended
 * job holds it.
 */
int64_t cluster_free_at(uint32_t index)
{
	int64_t free = now;

	for (size_t j = 0; j < n_jobs; j++)
		for (size_t u = 0; u < jobs[j].n; u++)
			if (jobs[j].use[u].node == index) {
				int64_t end = jobs[j].suspended ? INT64_MAX : jobs[j].end;

				if (end > free)
					free = end;
			}
	return free;
}

/*
 * The times nodes become free, ascending and distinct: now, then each
 * running job's planned end after now. Returns how many; *times is
 * malloc'd (free it).
 */
size_t cluster_end_times(int64_t **times)
{
	size_t n = 0, d = 0;
	int64_t *t = must(malloc((n_jobs + 1) * sizeof(*t)));

	t[n++] = now;
	for (size_t j = 0; j < n_jobs; j++)
		if (!jobs[j].suspended && jobs[j].end > now)
			t[n++] = jobs[j].end;
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && t[k - 1] > t[k]; k--) {
			int64_t x = t[k];

			t[k] = t[k - 1];
			t[k - 1] = x;
		}
	for (size_t i = 0; i < n; i++)
		if (!d || t[d - 1] != t[i])
			t[d++] = t[i];
	*times = t;
	return d;
}

/* Sets b to a malloc'd bitmap of len bits with the n bits of set. */
void cluster_bitmap(slurm_plugin_types_bitmap_t *b, uint32_t len,
		    const uint32_t *set, size_t n)
{
	b->len = len;
	b->words.len = (len + 63) / 64;
	b->words.ptr = b->words.len ?
		must(calloc(b->words.len, sizeof(uint64_t))) : NULL;
	for (size_t i = 0; i < n; i++)
		if (set[i] < len)
			b->words.ptr[set[i] / 64] |= (uint64_t)1 << (set[i] % 64);
}

/*
 * The set bits of b, ascending, into a malloc'd array (free it); returns
 * how many.
 */
size_t cluster_ones(const slurm_plugin_types_bitmap_t *b, uint32_t **bits)
{
	size_t n = 0;

	*bits = must(malloc((b->len ? b->len : 1) * sizeof(**bits)));
	for (uint32_t i = 0; i < b->len && i / 64 < b->words.len; i++)
		if (b->words.ptr[i / 64] >> (i % 64) & 1)
			(*bits)[n++] = i;
	return n;
}

/* Forgets job id (nothing when unknown). */
static void forget(uint32_t id)
{
	for (size_t j = 0; j < n_jobs; j++)
		if (jobs[j].id == id) {
			free(jobs[j].use);
			jobs[j] = jobs[--n_jobs];
			return;
		}
}

/* Forgets every job. */
static void forget_all(void)
{
	for (size_t j = 0; j < n_jobs; j++)
		free(jobs[j].use);
	free(jobs);
	jobs = NULL;
	n_jobs = 0;
}

/*
 * Records job with what its resources hold on each node (replacing an
 * earlier record of it). Fails with EINVAL for a job without resources.
 */
static bool begin(const slurm_plugin_types_job_t *job, bool suspended,
		  slurm_plugin_types_plugin_error_t *err)
{
	const slurm_plugin_types_job_resources_t *r = &job->resources.val;
	struct job_rec rec = { job->job_id, job->end_time, suspended, 0, NULL };

	if (!job->resources.is_some)
		return slurm_plugin_fail(err, EINVAL, "job %u has no resources",
					 job->job_id);
	forget(job->job_id);
	rec.n = r->per_node.len;
	rec.use = must(malloc((rec.n ? rec.n : 1) * sizeof(*rec.use)));
	for (size_t i = 0; i < rec.n; i++) {
		rec.use[i].node = r->per_node.ptr[i].node_index;
		rec.use[i].cpus = r->per_node.ptr[i].cpus;
		rec.use[i].memory = r->per_node.ptr[i].memory;
	}
	jobs = must(realloc(jobs, (n_jobs + 1) * sizeof(*jobs)));
	jobs[n_jobs++] = rec;
	return true;
}

/* The record of job id, NULL when unknown. */
static struct job_rec *find(uint32_t id)
{
	for (size_t j = 0; j < n_jobs; j++)
		if (jobs[j].id == id)
			return &jobs[j];
	return NULL;
}

/* The table's record of node. */
static struct node_rec node_rec(const slurm_plugin_types_node_t *node)
{
	struct node_rec rec = {
		node->cpus, (uint32_t)node->sockets * node->cores_per_socket,
		node->real_memory, node->tmp_disk, node->state.flags,
	};
	return rec;
}

/* init(): empty tables. Never fails. */
DEFAULT bool exports_slurm_plugin_select_init(
	exports_slurm_plugin_select_select_config_t *config,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	exports_slurm_plugin_select_select_config_free(config);
	forget_all();
	free(nodes);
	nodes = NULL;
	n_nodes = 0;
	initialised = true;
	return true;
}

/* fini(): drops the tables. Never fails. */
DEFAULT bool exports_slurm_plugin_select_fini(
	exports_slurm_plugin_select_plugin_error_t *err)
{
	forget_all();
	free(nodes);
	nodes = NULL;
	n_nodes = 0;
	initialised = false;
	return true;
}

/* The state blob: these 8 bytes and the plugin's (none: length 0). */
static const uint8_t state_magic[8] = { 'S', 'W', 'C', 'S', 'E', 'L', 0, 1 };

/* state_save(): the magic and an empty plugin part. Never fails. */
DEFAULT bool exports_slurm_plugin_select_state_save(
	select_plugin_list_u8_t *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	ret->len = sizeof(state_magic) + 4;
	ret->ptr = must(calloc(ret->len, 1));
	memcpy(ret->ptr, state_magic, sizeof(state_magic));
	return true;
}

/* state_restore(): what state_save() wrote; anything else is EINVAL. */
DEFAULT bool exports_slurm_plugin_select_state_restore(
	select_plugin_list_u8_t *data,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	static const uint8_t none[4];
	bool ok = data->len == sizeof(state_magic) + 4 &&
		  !memcmp(data->ptr, state_magic, sizeof(state_magic)) &&
		  !memcmp(data->ptr + sizeof(state_magic), none, 4);
	size_t len = data->len;

	select_plugin_list_u8_free(data);
	if (!ok)
		return slurm_plugin_fail(err, EINVAL,
					 "select: not a state this plugin saved (%zu bytes)",
					 len);
	return true;
}

/* job_init(): records each running and suspended job with resources. */
DEFAULT bool exports_slurm_plugin_select_job_init(
	exports_slurm_plugin_select_list_job_t *list,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	bool ok = ready(err);

	for (size_t i = 0; ok && i < list->len; i++) {
		slurm_plugin_types_job_t *job = &list->ptr[i];

		if ((job->state == SLURM_PLUGIN_TYPES_JOB_STATE_RUNNING ||
		     job->state == SLURM_PLUGIN_TYPES_JOB_STATE_SUSPENDED) &&
		    job->resources.is_some)
			ok = begin(job, job->state == SLURM_PLUGIN_TYPES_JOB_STATE_SUSPENDED,
				   err);
	}
	exports_slurm_plugin_select_list_job_free(list);
	return ok;
}

/* node_init(): the node table; forgets every job (job-init follows). */
DEFAULT bool exports_slurm_plugin_select_node_init(
	exports_slurm_plugin_select_list_node_t *list,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	bool ok = ready(err);

	if (ok) {
		forget_all();
		free(nodes);
		n_nodes = list->len;
		nodes = must(malloc((n_nodes ? n_nodes : 1) * sizeof(*nodes)));
		for (size_t i = 0; i < n_nodes; i++)
			nodes[i] = node_rec(&list->ptr[i]);
	}
	exports_slurm_plugin_select_list_node_free(list);
	return ok;
}

/* job_begin(): records the starting job; EINVAL without resources. */
DEFAULT bool exports_slurm_plugin_select_job_begin(
	exports_slurm_plugin_select_job_t *job,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	bool ok = ready(err) && begin(job, false, err);

	exports_slurm_plugin_select_job_free(job);
	return ok;
}

/*
 * job_ready(): false for a job not running or suspended, else true unless
 * one of its nodes is powered down or powering up (select/linear's
 * select_p_job_ready).
 */
DEFAULT bool exports_slurm_plugin_select_job_ready(
	exports_slurm_plugin_select_job_t *job, bool *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	uint32_t off = SLURM_PLUGIN_TYPES_NODE_STATE_FLAGS_POWER_SAVE |
		       SLURM_PLUGIN_TYPES_NODE_STATE_FLAGS_POWERING_UP;
	bool ok = ready(err);

	*ret = job->state == SLURM_PLUGIN_TYPES_JOB_STATE_RUNNING ||
	       job->state == SLURM_PLUGIN_TYPES_JOB_STATE_SUSPENDED;
	for (size_t i = 0; ok && *ret && job->resources.is_some &&
	     i < job->resources.val.per_node.len; i++) {
		uint32_t n = job->resources.val.per_node.ptr[i].node_index;

		if (n < n_nodes && (nodes[n].flags & off))
			*ret = false;
	}
	exports_slurm_plugin_select_job_free(job);
	return ok;
}

/* job_expand_allow(): no, jobs are not merged. */
DEFAULT bool exports_slurm_plugin_select_job_expand_allow(void)
{
	return false;
}

/* job_expand(): ESLURM_NOT_SUPPORTED. */
DEFAULT bool exports_slurm_plugin_select_job_expand(
	exports_slurm_plugin_select_job_t *from,
	exports_slurm_plugin_select_job_t *to,
	exports_slurm_plugin_select_job_resources_t *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	exports_slurm_plugin_select_job_free(from);
	exports_slurm_plugin_select_job_free(to);
	return slurm_plugin_fail(err, ESLURM_NOT_SUPPORTED,
				 "select: job-expand is not supported");
}

/* job_resized(): node_index leaves the job. */
DEFAULT bool exports_slurm_plugin_select_job_resized(
	exports_slurm_plugin_select_job_t *job, uint32_t node_index,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	bool ok = ready(err);
	struct job_rec *rec = ok ? find(job->job_id) : NULL;

	for (size_t u = 0; rec && u < rec->n; u++)
		if (rec->use[u].node == node_index)
			rec->use[u--] = rec->use[--rec->n];
	exports_slurm_plugin_select_job_free(job);
	return ok;
}

/* job_signal(): nothing to do. */
DEFAULT bool exports_slurm_plugin_select_job_signal(
	exports_slurm_plugin_select_job_t *job, int32_t signal,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	exports_slurm_plugin_select_job_free(job);
	return true;
}

/* job_mem_confirm(): nothing to confirm. */
DEFAULT bool exports_slurm_plugin_select_job_mem_confirm(
	exports_slurm_plugin_select_job_t *job,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	exports_slurm_plugin_select_job_free(job);
	return true;
}

/* job_fini(): forgets the job (an unknown one is no error). */
DEFAULT bool exports_slurm_plugin_select_job_fini(
	exports_slurm_plugin_select_job_t *job,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	bool ok = ready(err);

	if (ok)
		forget(job->job_id);
	exports_slurm_plugin_select_job_free(job);
	return ok;
}

/* job_suspend(): the job keeps its nodes, not its CPUs. */
DEFAULT bool exports_slurm_plugin_select_job_suspend(
	exports_slurm_plugin_select_job_t *job, bool indefinite,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	bool ok = ready(err);
	struct job_rec *rec = ok ? find(job->job_id) : NULL;

	if (rec)
		rec->suspended = true;
	exports_slurm_plugin_select_job_free(job);
	return ok;
}

/* job_resume(): running again, with its new planned end. */
DEFAULT bool exports_slurm_plugin_select_job_resume(
	exports_slurm_plugin_select_job_t *job, bool indefinite,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	bool ok = ready(err);
	struct job_rec *rec = ok ? find(job->job_id) : NULL;

	if (rec) {
		rec->suspended = false;
		rec->end = job->end_time;
	}
	exports_slurm_plugin_select_job_free(job);
	return ok;
}

/* step_pick_nodes(): none, the controller picks (select/linear's answer). */
DEFAULT bool exports_slurm_plugin_select_step_pick_nodes(
	exports_slurm_plugin_select_job_t *job,
	exports_slurm_plugin_select_step_t *step, uint32_t node_count,
	exports_slurm_plugin_select_bitmap_t *maybe_available,
	exports_slurm_plugin_select_option_bitmap_t *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	exports_slurm_plugin_select_job_free(job);
	exports_slurm_plugin_select_step_free(step);
	if (maybe_available)
		exports_slurm_plugin_select_bitmap_free(maybe_available);
	ret->is_some = false;
	return true;
}

/* step_finish(): nothing kept per step. */
DEFAULT bool exports_slurm_plugin_select_step_finish(
	exports_slurm_plugin_select_step_t *step, bool killing,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	exports_slurm_plugin_select_step_free(step);
	return true;
}

/* reconfigure(): the jobs rebuilt from the running ones. */
DEFAULT bool exports_slurm_plugin_select_reconfigure(
	exports_slurm_plugin_select_select_config_t *config,
	exports_slurm_plugin_select_list_job_t *running,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	bool ok = ready(err);

	if (ok)
		forget_all();
	for (size_t i = 0; ok && i < running->len; i++)
		if (running->ptr[i].resources.is_some)
			ok = begin(&running->ptr[i],
				   running->ptr[i].state ==
				   SLURM_PLUGIN_TYPES_JOB_STATE_SUSPENDED, err);
	exports_slurm_plugin_select_select_config_free(config);
	exports_slurm_plugin_select_list_job_free(running);
	return ok;
}

/* Replaces node->index in the table; EINVAL past its end. */
static bool update_node(exports_slurm_plugin_select_node_t *node,
			exports_slurm_plugin_select_plugin_error_t *err)
{
	bool ok = ready(err);
	uint32_t index = node->index;

	if (ok && index < n_nodes)
		nodes[index] = node_rec(node);
	exports_slurm_plugin_select_node_free(node);
	if (ok && index >= n_nodes)
		return slurm_plugin_fail(err, EINVAL,
					 "node update for index %u of %zu nodes",
					 index, n_nodes);
	return ok;
}

/* update_node_config(): the node's new record. */
DEFAULT bool exports_slurm_plugin_select_update_node_config(
	exports_slurm_plugin_select_node_t *node,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	return update_node(node, err);
}

/* update_node_state(): the node's new record. */
DEFAULT bool exports_slurm_plugin_select_update_node_state(
	exports_slurm_plugin_select_node_t *node,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	return update_node(node, err);
}

/* node_ranking(): none (no ranking). */
DEFAULT bool exports_slurm_plugin_select_node_ranking(
	exports_slurm_plugin_select_list_node_t *list,
	select_plugin_option_list_u32_t *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	exports_slurm_plugin_select_list_node_free(list);
	ret->is_some = false;
	return true;
}

/* nodeinfo_set_all(): nothing to do, nodeinfo is computed when asked. */
DEFAULT bool exports_slurm_plugin_select_nodeinfo_set_all(
	exports_slurm_plugin_select_plugin_error_t *err)
{
	return ready(err);
}

/* nodeinfo_set(): nothing to do. */
DEFAULT bool exports_slurm_plugin_select_nodeinfo_set(
	exports_slurm_plugin_select_job_t *job,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	exports_slurm_plugin_select_job_free(job);
	return true;
}

/*
 * node_nodeinfo(): the CPUs of running jobs on the node (its CPUs at
 * most) and the memory of running and suspended ones.
 */
DEFAULT bool exports_slurm_plugin_select_node_nodeinfo(
	uint32_t node_index,
	exports_slurm_plugin_select_own_select_nodeinfo_t *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	exports_slurm_plugin_select_select_nodeinfo_t *info;
	uint32_t cpus = 0;

	if (!ready(err))
		return false;
	info = must(calloc(1, sizeof(*info)));
	for (size_t j = 0; j < n_jobs; j++)
		for (size_t u = 0; u < jobs[j].n; u++)
			if (jobs[j].use[u].node == node_index) {
				cpus += jobs[j].suspended ? 0 : jobs[j].use[u].cpus;
				info->memory += jobs[j].use[u].memory;
			}
	if (node_index < n_nodes && cpus > nodes[node_index].cpus)
		cpus = nodes[node_index].cpus;
	info->cpus = (uint16_t)cpus;
	*ret = exports_slurm_plugin_select_select_nodeinfo_new(info);
	return true;
}

/* get_info_from_plugin(): cr-plugin 0 (whole nodes), no config, no single test. */
DEFAULT bool exports_slurm_plugin_select_get_info_from_plugin(
	exports_slurm_plugin_select_plugin_info_field_t field,
	exports_slurm_plugin_select_job_t *maybe_job,
	exports_slurm_plugin_select_plugin_info_value_t *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	if (maybe_job)
		exports_slurm_plugin_select_job_free(maybe_job);
	memset(ret, 0, sizeof(*ret));
	switch (field) {
	case EXPORTS_SLURM_PLUGIN_SELECT_PLUGIN_INFO_FIELD_CR_PLUGIN:
		ret->tag = EXPORTS_SLURM_PLUGIN_SELECT_PLUGIN_INFO_VALUE_NUMBER;
		ret->val.number = 0;
		break;
	case EXPORTS_SLURM_PLUGIN_SELECT_PLUGIN_INFO_FIELD_CONFIG_INFO:
		ret->tag = EXPORTS_SLURM_PLUGIN_SELECT_PLUGIN_INFO_VALUE_CONFIG;
		break;
	default:
		ret->tag = EXPORTS_SLURM_PLUGIN_SELECT_PLUGIN_INFO_VALUE_FLAG;
		ret->val.flag = false;
	}
	return true;
}

/*
 * resv_test(): the first node-count available nodes, no cores
 * (select/linear's select_p_resv_test); ESLURM_NODES_BUSY when too few.
 */
DEFAULT bool exports_slurm_plugin_select_resv_test(
	exports_slurm_plugin_select_reservation_request_t *request,
	exports_slurm_plugin_select_reservation_result_t *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	uint32_t *bits, want = request->node_count, len = request->available.len;
	size_t n = cluster_ones(&request->available, &bits);

	exports_slurm_plugin_select_reservation_request_free(request);
	if (n < want) {
		free(bits);
		return slurm_plugin_fail(err, ESLURM_NODES_BUSY,
					 "resv-test: %u nodes wanted, %zu available",
					 want, n);
	}
	cluster_bitmap(&ret->nodes, len, bits, want);
	ret->cores.is_some = false;
	free(bits);
	return true;
}

/* ba_init(): no block allocator on flat systems. */
DEFAULT bool exports_slurm_plugin_select_ba_init(
	exports_slurm_plugin_select_list_node_t *list, bool sanity_check,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	exports_slurm_plugin_select_list_node_free(list);
	return true;
}

/* ba_get_dims(): none (flat system). */
DEFAULT bool exports_slurm_plugin_select_ba_get_dims(select_plugin_list_u32_t *ret)
{
	return false;
}

/* The protocol versions of 20.11, 21.08 and 22.05; EINVAL otherwise. */
static bool protocol(uint16_t version, const char *what,
		     exports_slurm_plugin_select_plugin_error_t *err)
{
	if (version == 36 << 8 || version == 37 << 8 || version == 38 << 8)
		return true;
	return slurm_plugin_fail(err, EINVAL,
				 "%s: unsupported protocol version %#06x", what,
				 version);
}

/* The allocated TRES string of cpus and memory MB (cpu=4,mem=2000M). */
static void tres_string(char *text, size_t size, uint16_t cpus, uint64_t memory)
{
	const char *units = "MGTP";
	int unit = 0;

	text[0] = 0;
	if (cpus)
		snprintf(text, size, "cpu=%u", cpus);
	if (memory) {
		while (unit < 3 && memory % 1024 == 0) {
			memory /= 1024;
			unit++;
		}
		snprintf(text + strlen(text), size - strlen(text), "%smem=%llu%c",
			 cpus ? "," : "", (unsigned long long)memory, units[unit]);
	}
}

/* Appends n bytes of v, most significant first. */
static uint8_t *put(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

/* Reads n bytes most significant first. */
static uint64_t get(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* select-nodeinfo's constructor: nothing allocated. */
DEFAULT exports_slurm_plugin_select_own_select_nodeinfo_t
exports_slurm_plugin_select_constructor_select_nodeinfo(void)
{
	return exports_slurm_plugin_select_select_nodeinfo_new(
		must(calloc(1, sizeof(exports_slurm_plugin_select_select_nodeinfo_t))));
}

/* select-nodeinfo.pack(): pack16, pack64, packstr, packdouble (x 1e6). */
DEFAULT bool exports_slurm_plugin_select_method_select_nodeinfo_pack(
	exports_slurm_plugin_select_borrow_select_nodeinfo_t self,
	uint16_t protocol_version, select_plugin_list_u8_t *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	char text[64];
	size_t n;
	double weighted = self->cpus * 1000000.0;
	uint64_t bits;
	uint8_t *p;

	if (!protocol(protocol_version, "select nodeinfo pack", err))
		return false;
	tres_string(text, sizeof(text), self->cpus, self->memory);
	n = text[0] ? strlen(text) + 1 : 0;
	ret->len = 2 + 8 + 4 + n + 8;
	ret->ptr = must(malloc(ret->len));
	p = put(ret->ptr, self->cpus, 2);
	p = put(p, self->memory, 8);
	p = put(p, n, 4);
	memcpy(p, text, n);
	memcpy(&bits, &weighted, sizeof(bits));
	put(p + n, bits, 8);
	return true;
}

/* select-nodeinfo.unpack(): the inverse of pack; EINVAL when malformed. */
DEFAULT bool exports_slurm_plugin_select_static_select_nodeinfo_unpack(
	select_plugin_list_u8_t *data, uint16_t protocol_version,
	exports_slurm_plugin_select_own_select_nodeinfo_t *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	exports_slurm_plugin_select_select_nodeinfo_t *info;
	/* 14 bytes, the string of its packed length, 8 bytes: nothing more. */
	size_t n = data->len >= 22 ? data->len - 22 : 0;
	bool ok = data->len >= 22 && get(data->ptr + 10, 4) == n &&
		  (!n || data->ptr[13 + n] == 0);

	if (!protocol(protocol_version, "select nodeinfo unpack", err)) {
		select_plugin_list_u8_free(data);
		return false;
	}
	if (!ok) {
		select_plugin_list_u8_free(data);
		return slurm_plugin_fail(err, EINVAL, "select nodeinfo unpack: malformed");
	}
	info = must(calloc(1, sizeof(*info)));
	info->cpus = (uint16_t)get(data->ptr, 2);
	info->memory = get(data->ptr + 2, 8);
	select_plugin_list_u8_free(data);
	*ret = exports_slurm_plugin_select_select_nodeinfo_new(info);
	return true;
}

/* select-nodeinfo.get(): SUBCNT for NODE_STATE_ALLOCATED (3), ptr fails. */
DEFAULT bool exports_slurm_plugin_select_method_select_nodeinfo_get(
	exports_slurm_plugin_select_borrow_select_nodeinfo_t self,
	exports_slurm_plugin_select_nodeinfo_field_t field, uint32_t state,
	exports_slurm_plugin_select_nodeinfo_value_t *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	char text[64];

	switch (field) {
	case EXPORTS_SLURM_PLUGIN_SELECT_NODEINFO_FIELD_SUBCNT:
		ret->tag = EXPORTS_SLURM_PLUGIN_SELECT_NODEINFO_VALUE_COUNT;
		ret->val.count = state == 3 ? self->cpus : 0;
		return true;
	case EXPORTS_SLURM_PLUGIN_SELECT_NODEINFO_FIELD_MEM_ALLOC:
		ret->tag = EXPORTS_SLURM_PLUGIN_SELECT_NODEINFO_VALUE_MEMORY;
		ret->val.memory = self->memory;
		return true;
	case EXPORTS_SLURM_PLUGIN_SELECT_NODEINFO_FIELD_TRES_ALLOC_FMT_STR:
		tres_string(text, sizeof(text), self->cpus, self->memory);
		ret->tag = EXPORTS_SLURM_PLUGIN_SELECT_NODEINFO_VALUE_TEXT;
		slurm_plugin_string(&ret->val.text.ptr, &ret->val.text.len, text);
		return true;
	case EXPORTS_SLURM_PLUGIN_SELECT_NODEINFO_FIELD_TRES_ALLOC_WEIGHTED:
		ret->tag = EXPORTS_SLURM_PLUGIN_SELECT_NODEINFO_VALUE_WEIGHTED;
		ret->val.weighted = self->cpus;
		return true;
	default:
		return slurm_plugin_fail(err, SLURM_ERROR,
					 "select nodeinfo get: the ptr field is a C pointer");
	}
}

/* select-nodeinfo's destructor. */
DEFAULT void exports_slurm_plugin_select_select_nodeinfo_destructor(
	exports_slurm_plugin_select_select_nodeinfo_t *rep)
{
	free(rep);
}

/* select-jobinfo's constructor: the empty record. */
DEFAULT exports_slurm_plugin_select_own_select_jobinfo_t
exports_slurm_plugin_select_constructor_select_jobinfo(void)
{
	return exports_slurm_plugin_select_select_jobinfo_new(
		must(calloc(1, sizeof(exports_slurm_plugin_select_select_jobinfo_t))));
}

/* select-jobinfo.copy(): another empty record. */
DEFAULT exports_slurm_plugin_select_own_select_jobinfo_t
exports_slurm_plugin_select_method_select_jobinfo_copy(
	exports_slurm_plugin_select_borrow_select_jobinfo_t self)
{
	return exports_slurm_plugin_select_constructor_select_jobinfo();
}

/* select-jobinfo.pack(): nothing. */
DEFAULT bool exports_slurm_plugin_select_method_select_jobinfo_pack(
	exports_slurm_plugin_select_borrow_select_jobinfo_t self,
	uint16_t protocol_version, select_plugin_list_u8_t *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	ret->ptr = NULL;
	ret->len = 0;
	return protocol(protocol_version, "select jobinfo pack", err);
}

/* select-jobinfo.unpack(): nothing; EINVAL for any byte. */
DEFAULT bool exports_slurm_plugin_select_static_select_jobinfo_unpack(
	select_plugin_list_u8_t *data, uint16_t protocol_version,
	exports_slurm_plugin_select_own_select_jobinfo_t *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	size_t len = data->len;

	select_plugin_list_u8_free(data);
	if (!protocol(protocol_version, "select jobinfo unpack", err))
		return false;
	if (len)
		return slurm_plugin_fail(err, EINVAL,
					 "select jobinfo unpack: %zu bytes", len);
	*ret = exports_slurm_plugin_select_constructor_select_jobinfo();
	return true;
}

/* select-jobinfo.get(): SLURM_ERROR, nothing is kept per job. */
DEFAULT bool exports_slurm_plugin_select_method_select_jobinfo_get(
	exports_slurm_plugin_select_borrow_select_jobinfo_t self,
	exports_slurm_plugin_select_jobinfo_field_t field,
	exports_slurm_plugin_select_jobinfo_value_t *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	return slurm_plugin_fail(err, SLURM_ERROR,
				 "select jobinfo get: no per-job data");
}

/* select-jobinfo.set(): accepted and ignored. */
DEFAULT bool exports_slurm_plugin_select_method_select_jobinfo_set(
	exports_slurm_plugin_select_borrow_select_jobinfo_t self,
	exports_slurm_plugin_select_jobinfo_field_t field,
	exports_slurm_plugin_select_jobinfo_value_t *value,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	exports_slurm_plugin_select_jobinfo_value_free(value);
	return true;
}

/* select-jobinfo.to-string(): empty. */
DEFAULT void exports_slurm_plugin_select_method_select_jobinfo_to_string(
	exports_slurm_plugin_select_borrow_select_jobinfo_t self,
	exports_slurm_plugin_select_sprint_mode_t mode,
	select_plugin_string_t *ret)
{
	ret->ptr = NULL;
	ret->len = 0;
}

/* select-jobinfo's destructor. */
DEFAULT void exports_slurm_plugin_select_select_jobinfo_destructor(
	exports_slurm_plugin_select_select_jobinfo_t *rep)
{
	free(rep);
}
