/*
 * plugin.c - select/first_fit: whole nodes, first fit. A job gets the
 * first candidate nodes (its -w nodes first, then by index) that can hold
 * it (first_fit() in policy.c); run-now takes only nodes free now, and a
 * will-run answer starts the job at the first running job's end that
 * frees enough of them. defaults.c keeps the nodes, the running jobs,
 * nodeinfo, jobinfo and the state.
 */
#include "select_plugin.h"
#include "slurm_plugin.h"
#include "policy.h"

#define PLUGIN_TYPE "select/first_fit"

#define ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE 2014
#define ESLURM_NODES_BUSY 2016

/* Kept by defaults.c (see there). */
bool cluster_initialised(void);
int64_t cluster_now(void);
bool cluster_node(uint32_t index, uint16_t *cpus, uint32_t *cores,
		  uint64_t *memory, uint64_t *tmp_disk);
int64_t cluster_free_at(uint32_t index);
size_t cluster_end_times(int64_t **times);
void cluster_bitmap(slurm_plugin_types_bitmap_t *b, uint32_t len,
		    const uint32_t *set, size_t n);
size_t cluster_ones(const slurm_plugin_types_bitmap_t *b, uint32_t **bits);

/* describe(): the plugin's identity. Never fails. */
void exports_select_plugin_describe(select_plugin_plugin_identity_t *ret)
{
	slurm_plugin_identity(ret, PLUGIN_TYPE, "whole nodes, first fit", NULL, 0);
}

/* What first_fit() reads of the request's job. */
static struct ff_job ff_job(const exports_slurm_plugin_select_job_test_request_t *r,
			    uint32_t **required)
{
	const slurm_plugin_types_job_details_t *d = &r->job.details;
	struct ff_job job = {
		.min_nodes = r->min_nodes > d->min_nodes ? r->min_nodes : d->min_nodes,
		.max_nodes = r->max_nodes,
		.min_cpus = d->min_cpus,
		.pn_min_cpus = d->pn_min_cpus,
		.tmp_disk = d->pn_min_tmp_disk,
	};

	if (d->memory.tag == SLURM_PLUGIN_TYPES_MEMORY_REQUEST_PER_NODE)
		job.mem_per_node = d->memory.val.per_node;
	if (d->memory.tag == SLURM_PLUGIN_TYPES_MEMORY_REQUEST_PER_CPU)
		job.mem_per_cpu = d->memory.val.per_cpu;
	*required = NULL;
	if (d->required_nodes.is_some)
		job.n_required = cluster_ones(&d->required_nodes.val, required);
	job.required = *required;
	return job;
}

/*
 * Fills *ret with the whole nodes chosen[0..n): every core and CPU of each,
 * the job's memory per node, start for a will-run answer, no preemptees.
 */
static void whole_nodes(const exports_slurm_plugin_select_job_test_request_t *r,
			const struct ff_job *job, const uint32_t *chosen,
			size_t n, const int64_t *start,
			exports_slurm_plugin_select_job_test_result_t *ret)
{
	slurm_plugin_types_job_resources_t *res = &ret->resources;
	uint32_t len = r->candidates.len;

	memset(ret, 0, sizeof(*ret));
	cluster_bitmap(&res->nodes, len, chosen, n);
	res->whole_nodes = true;
	res->per_node.len = n;
	res->per_node.ptr = calloc(n ? n : 1, sizeof(*res->per_node.ptr));
	if (!res->per_node.ptr)
		abort();
	for (size_t i = 0; i < n; i++) {
		slurm_plugin_types_node_resources_t *e = &res->per_node.ptr[i];
		struct ff_node node = { chosen[i] };
		uint32_t cores, *all;

		cluster_node(chosen[i], &node.cpus, &cores, &node.memory,
			     &node.tmp_disk);
		all = malloc((cores ? cores : 1) * sizeof(*all));
		if (!all)
			abort();
		for (uint32_t c = 0; c < cores; c++)
			all[c] = c;
		e->node_index = chosen[i];
		cluster_bitmap(&e->cores, cores, all, cores);
		free(all);
		e->cpus = node.cpus;
		e->memory = first_fit_memory(job, &node);
		if (e->memory > node.memory)
			e->memory = node.memory;
		res->ncpus += node.cpus;
	}
	ret->start_time.is_some = start != NULL;
	if (start)
		ret->start_time.val = *start;
}

/*
 * job_test(): run-now on the candidates free now, test-only on all of
 * them, will-run (and reservation) at the first end time that frees
 * enough. Fails with ESLURM_NODES_BUSY (run-now) or
 * ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE when the job does not fit, and
 * with SLURM_ERROR before init().
 */
bool exports_slurm_plugin_select_job_test(
	exports_slurm_plugin_select_job_test_request_t *request,
	exports_slurm_plugin_select_job_test_result_t *ret,
	exports_slurm_plugin_select_plugin_error_t *err)
{
	uint32_t *candidates, *required, *chosen;
	struct ff_node *nodes;
	struct ff_job job;
	int64_t *times = NULL, start;
	size_t n, k = 0, picked = 0, n_times = 0;
	uint8_t mode = request->mode;
	bool ok = true;

	if (!cluster_initialised()) {
		exports_slurm_plugin_select_job_test_request_free(request);
		return slurm_plugin_fail(err, SLURM_ERROR, PLUGIN_TYPE ": called before init");
	}
	n = cluster_ones(&request->candidates, &candidates);
	nodes = calloc(n ? n : 1, sizeof(*nodes));
	chosen = calloc(n ? n : 1, sizeof(*chosen));
	if (!nodes || !chosen)
		abort();
	for (size_t i = 0; i < n; i++) {
		uint32_t cores;

		nodes[k].index = candidates[i];
		if (cluster_node(candidates[i], &nodes[k].cpus, &cores,
				 &nodes[k].memory, &nodes[k].tmp_disk)) {
			nodes[k].free_at = cluster_free_at(candidates[i]);
			k++;
		}
	}
	job = ff_job(request, &required);
	if (mode == EXPORTS_SLURM_PLUGIN_SELECT_JOB_TEST_MODE_RUN_NOW) {
		picked = first_fit(nodes, k, &job, cluster_now(), chosen);
	} else if (mode == EXPORTS_SLURM_PLUGIN_SELECT_JOB_TEST_MODE_TEST_ONLY) {
		picked = first_fit(nodes, k, &job, INT64_MAX, chosen);
	} else {
		n_times = cluster_end_times(&times);
		for (size_t t = 0; t < n_times && !picked; t++) {
			picked = first_fit(nodes, k, &job, times[t], chosen);
			start = times[t];
		}
	}
	if (picked)
		whole_nodes(request, &job, chosen, picked, n_times ? &start : NULL, ret);
	else if (mode == EXPORTS_SLURM_PLUGIN_SELECT_JOB_TEST_MODE_RUN_NOW)
		ok = slurm_plugin_fail(err, ESLURM_NODES_BUSY,
				       "job %u: no candidate nodes free now",
				       request->job.job_id);
	else
		ok = slurm_plugin_fail(err, ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE,
				       "job %u: the candidate nodes cannot hold the job",
				       request->job.job_id);
	free(candidates);
	free(required);
	free(nodes);
	free(chosen);
	free(times);
	exports_slurm_plugin_select_job_test_request_free(request);
	return ok;
}
