/*
 * records.c: slurmctld's records as the C ABI's structs, and a job-test
 * answer written into Slurm's records (see records.h).
 */
#include <string.h>

#include "config.h"
#include "src/common/bitstring.h"
#include "src/common/gres.h"
#include "src/common/job_resources.h"
#include "src/common/list.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "records.h"

/* cons_common's (compiled into this plugin from Slurm's tree): the
 * DefCpuPerGPU and DefMemPerGPU of a JobDefaults list, NO_VAL64 if unset. */
extern uint64_t common_get_def_cpu_per_gpu(List job_defaults_list);
extern uint64_t common_get_def_mem_per_gpu(List job_defaults_list);

/* ---- the partition table ---- */

/* Partitions in part_list order: a partition's index is its position. */
static swasm_part_table_t parts;

/* DefCpuPerGPU and DefMemPerGPU of a job_defaults_list (slurm.conf's or a
 * partition's line, as cons_common's common_get_def_* read them). */
static void _gpu_defaults(List defaults, swasm_gpu_defaults *out)
{
	uint64_t v;

	if (!defaults)
		return;
	v = common_get_def_cpu_per_gpu(defaults);
	out->has_cpus_per_gpu = (v != NO_VAL64);
	out->cpus_per_gpu = v;
	v = common_get_def_mem_per_gpu(defaults);
	out->has_mem_per_gpu = (v != NO_VAL64);
	out->mem_per_gpu = v;
}

extern void records_config(arena_t *arena, swasm_select_config *out)
{
	swasm_partition *partitions;

	memset(out, 0, sizeof(*out));
	swasm_records_cluster(arena, &out->cluster, 0);
	_gpu_defaults(slurm_conf.job_defaults_list, &out->cluster.gpu_defaults);
	partitions = swasm_records_partitions(arena, &parts);
	for (int i = 0; i < parts.n; i++)
		_gpu_defaults(parts.parts[i]->job_defaults_list,
			      &partitions[i].gpu_defaults);
	out->partitions = partitions;
	out->n_partitions = parts.n;
}

/* ---- nodes ---- */

/* The GRES of a node: configured counts (by type when the node has types)
 * and the device groups of gres.conf, from the node's gres_node_state_t
 * records (type_* and topo_* arrays, as gres.c fills them at registration
 * and from the configuration). */
static void _node_gres(arena_t *arena, node_record_t *node_ptr,
		       swasm_node *out)
{
	swasm_gres_count *counts;
	swasm_gres_device_group *groups;
	size_t n_counts = 0, n_groups = 0, cap_counts = 0, cap_groups = 0;
	gres_state_t *gs;
	ListIterator itr;

	if (!node_ptr->gres_list || !list_count(node_ptr->gres_list))
		return;
	itr = list_iterator_create(node_ptr->gres_list);
	while ((gs = list_next(itr))) {
		gres_node_state_t *ns = gs->gres_data;
		cap_counts += 1 + (ns ? ns->type_cnt : 0);
		cap_groups += ns ? ns->topo_cnt : 0;
	}
	counts = arena_alloc(arena, cap_counts * sizeof(*counts));
	groups = arena_alloc(arena, (cap_groups ? cap_groups : 1) *
					 sizeof(*groups));
	list_iterator_reset(itr);
	while ((gs = list_next(itr))) {
		gres_node_state_t *ns = gs->gres_data;
		if (!ns)
			continue;
		if (ns->type_cnt && ns->type_name && ns->type_name[0]) {
			for (int t = 0; t < ns->type_cnt; t++) {
				counts[n_counts].name = gs->gres_name;
				counts[n_counts].type_name = ns->type_name[t];
				counts[n_counts].count = ns->type_cnt_avail[t];
				n_counts++;
			}
		} else {
			counts[n_counts].name = gs->gres_name;
			counts[n_counts].count = ns->gres_cnt_avail;
			n_counts++;
		}
		for (int t = 0; t < ns->topo_cnt; t++) {
			swasm_gres_device_group *g = &groups[n_groups++];
			g->name = gs->gres_name;
			g->type_name = ns->topo_type_name ?
				       ns->topo_type_name[t] : NULL;
			g->count = ns->topo_gres_cnt_avail ?
				   ns->topo_gres_cnt_avail[t] : 0;
			if (ns->topo_core_bitmap && ns->topo_core_bitmap[t]) {
				swasm_bitmap *b = arena_alloc(arena, sizeof(*b));
				*b = swasm_records_bitmap(ns->topo_core_bitmap[t]);
				g->cores = b;
			}
			/* Links= of the device's first index, when given */
			if (ns->links_cnt && ns->link_len && ns->topo_gres_bitmap &&
			    ns->topo_gres_bitmap[t]) {
				int dev = bit_ffs(ns->topo_gres_bitmap[t]);
				if ((dev >= 0) && (dev < ns->link_len) &&
				    ns->links_cnt[dev]) {
					int32_t *links = arena_alloc(
						arena, ns->link_len * sizeof(int32_t));
					for (int l = 0; l < ns->link_len; l++)
						links[l] = ns->links_cnt[dev][l];
					g->links = links;
					g->n_links = ns->link_len;
				}
			}
		}
	}
	list_iterator_destroy(itr);
	out->gres = counts;
	out->n_gres = n_counts;
	out->gres_topology = groups;
	out->n_gres_topology = n_groups;
}

extern swasm_node *records_nodes(arena_t *arena, size_t *n)
{
	swasm_node *nodes = arena_alloc(arena, (node_record_count ?
						node_record_count : 1) *
						       sizeof(*nodes));
	node_record_t *node_ptr;
	size_t k = 0;

	for (int i = 0; (node_ptr = next_node(&i)); i++) {
		swasm_node *o = &nodes[k++];
		uint32_t *partitions;

		o->index = node_ptr->index;
		o->name = node_ptr->name;
		o->cpus = node_ptr->cpus;
		o->boards = node_ptr->boards;
		o->sockets = node_ptr->tot_sockets;
		o->cores_per_socket = node_ptr->cores;
		o->threads_per_core = node_ptr->threads;
		o->real_memory = node_ptr->real_memory;
		o->mem_spec_limit = node_ptr->mem_spec_limit;
		o->core_spec_count = node_ptr->core_spec_cnt;
		if (node_ptr->cpu_spec_list && node_ptr->cpus) {
			bitstr_t *b = bit_alloc(node_ptr->cpus);
			swasm_bitmap *ab = arena_alloc(arena, sizeof(*ab));
			if (!bit_unfmt(b, node_ptr->cpu_spec_list)) {
				*ab = swasm_records_bitmap_slice(
					arena, b, 0, node_ptr->cpus);
				o->cpu_spec_list = ab;
			}
			FREE_NULL_BITMAP(b);
		}
		o->tmp_disk = node_ptr->tmp_disk;
		o->weight = node_ptr->weight;
		o->features = swasm_records_tokens(arena, node_ptr->features,
						   &o->n_features);
		_node_gres(arena, node_ptr, o);
		o->state = node_ptr->node_state;
		partitions = arena_alloc(arena, (node_ptr->part_cnt ?
						 node_ptr->part_cnt : 1) *
							sizeof(uint32_t));
		for (int p = 0; p < node_ptr->part_cnt; p++) {
			int index = swasm_records_part_index(
				&parts, node_ptr->part_pptr[p]);
			if (index >= 0)
				partitions[o->n_partitions++] = index;
		}
		o->partitions = partitions;
	}
	*n = k;
	return nodes;
}

/* ---- jobs ---- */

static uint16_t _val16(uint16_t v)
{
	return ((v == NO_VAL16) || (v == INFINITE16)) ? 0 : v;
}

/* One GRES request (gres_job_state_t) in the contract's terms: the most
 * specific count the user gave (per task, socket, node, else per job;
 * slurmctld fills gres_per_job from the others at validation). */
static void _gres_request(gres_state_t *gs, swasm_gres_request *out)
{
	gres_job_state_t *js = gs->gres_data;

	out->name = gs->gres_name;
	out->type_name = js->type_name;
	if (js->gres_per_task) {
		out->scope = SWASM_GRES_PER_TASK;
		out->count = js->gres_per_task;
	} else if (js->gres_per_socket) {
		out->scope = SWASM_GRES_PER_SOCKET;
		out->count = js->gres_per_socket;
	} else if (js->gres_per_node) {
		out->scope = SWASM_GRES_PER_NODE;
		out->count = js->gres_per_node;
	} else {
		out->scope = SWASM_GRES_PER_JOB;
		out->count = js->gres_per_job;
	}
	out->has_cpus_per_gres = js->cpus_per_gres &&
				 (js->cpus_per_gres != NO_VAL16);
	out->cpus_per_gres = js->cpus_per_gres;
	out->has_mem_per_gres = js->mem_per_gres && (js->mem_per_gres != NO_VAL64);
	out->mem_per_gres = js->mem_per_gres;
}

/* The GRES a job holds on its `offset`-th node, from gres_list_alloc
 * (what gres_ctld_job_alloc recorded at commit). */
static void _node_gres_alloc(arena_t *arena, job_record_t *job_ptr, int offset,
			     swasm_node_resources *out)
{
	swasm_gres_allocation *allocs;
	gres_state_t *gs;
	ListIterator itr;
	size_t k = 0;

	if (!job_ptr->gres_list_alloc || !list_count(job_ptr->gres_list_alloc))
		return;
	allocs = arena_alloc(arena, list_count(job_ptr->gres_list_alloc) *
					    sizeof(*allocs));
	itr = list_iterator_create(job_ptr->gres_list_alloc);
	while ((gs = list_next(itr))) {
		gres_job_state_t *js = gs->gres_data;
		swasm_gres_allocation *a;
		uint64_t cnt = 0;

		if (!js || (offset >= js->node_cnt))
			continue;
		if (js->gres_cnt_node_alloc)
			cnt = js->gres_cnt_node_alloc[offset];
		if (!cnt)
			continue;
		a = &allocs[k++];
		a->name = gs->gres_name;
		a->type_name = js->type_name;
		a->count = cnt;
		if (js->gres_bit_alloc && js->gres_bit_alloc[offset]) {
			bitstr_t *map = js->gres_bit_alloc[offset];
			swasm_bitmap *b = arena_alloc(arena, sizeof(*b));
			int set = bit_set_count(map);
			*b = swasm_records_bitmap_slice(arena, map, 0,
							bit_size(map));
			a->devices = b;
			/* a shared GRES (mps) takes its count from its one
			 * device (gres_select_filter's rule in 22.05) */
			if (gres_id_shared(gs->config_flags) && (set == 1)) {
				uint64_t *per = arena_alloc(arena, sizeof(*per));
				per[0] = cnt;
				a->per_device = per;
				a->n_per_device = 1;
			}
		}
	}
	list_iterator_destroy(itr);
	out->gres = allocs;
	out->n_gres = k;
}

static void _resources(arena_t *arena, job_record_t *job_ptr,
		       swasm_job_resources *out)
{
	job_resources_t *jr = job_ptr->job_resrcs;
	swasm_node_resources *per;
	int offset = 0, core_off = 0;

	/* copies, not views: select_p_job_expand builds both jobs' records,
	 * then the bookkeeping clears the one job's bitmaps and frees the
	 * other's job_resrcs before the component is called */
	out->nodes = swasm_records_bitmap_slice(
		arena, jr->node_bitmap, 0,
		jr->node_bitmap ? bit_size(jr->node_bitmap) : 0);
	out->ncpus = job_ptr->total_cpus;
	out->whole_nodes = (jr->whole_node == WHOLE_NODE_REQUIRED);
	per = arena_alloc(arena, (jr->nhosts ? jr->nhosts : 1) * sizeof(*per));
	for (int i = 0; jr->node_bitmap && (i < bit_size(jr->node_bitmap)); i++) {
		node_record_t *node_ptr;
		int cores;

		if (!bit_test(jr->node_bitmap, i) || (offset >= jr->nhosts))
			continue;
		node_ptr = node_record_table_ptr[i];
		cores = node_ptr ? node_ptr->tot_cores : 0;
		per[offset].node_index = i;
		per[offset].cores = swasm_records_bitmap_slice(
			arena, jr->core_bitmap, core_off, cores);
		per[offset].cpus = jr->cpus ? jr->cpus[offset] : 0;
		per[offset].memory = jr->memory_allocated ?
				     jr->memory_allocated[offset] : 0;
		_node_gres_alloc(arena, job_ptr, offset, &per[offset]);
		core_off += cores;
		offset++;
	}
	out->per_node = per;
	out->n_per_node = offset;
}

extern bool records_job(arena_t *arena, job_record_t *job_ptr,
			bool with_resources, swasm_job *out)
{
	struct job_details *d = job_ptr->details;
	swasm_job_details *od = &out->details;

	swasm_records_job_identity(job_ptr, out);
	if (job_ptr->part_ptr) {
		int index = swasm_records_part_index(&parts, job_ptr->part_ptr);
		uint32_t *p;
		if (index < 0) {
			error("select/wasm: %pJ: partition %s is not in the table the plugin was given",
			      job_ptr, job_ptr->part_ptr->name);
			return false;
		}
		p = arena_alloc(arena, sizeof(*p));
		p[0] = index;
		out->partitions = p;
		out->n_partitions = 1;
	}
	out->qos = job_ptr->qos_ptr ? job_ptr->qos_ptr->name : NULL;
	out->state = job_ptr->job_state & JOB_STATE_BASE;
	if (out->state > SWASM_JOB_OOM)
		out->state = SWASM_JOB_FAILED;
	out->priority = job_ptr->priority;
	out->direct_set_priority = job_ptr->direct_set_prio;
	out->has_time_limit = (job_ptr->time_limit != NO_VAL) &&
			      (job_ptr->time_limit != INFINITE);
	out->time_limit = job_ptr->time_limit;
	out->has_time_min = job_ptr->time_min && (job_ptr->time_min != NO_VAL);
	out->time_min = job_ptr->time_min;
	out->start_time = job_ptr->start_time;
	out->end_time = job_ptr->end_time;
	out->suspended_seconds = job_ptr->tot_sus_time;

	if (d) {
		struct multi_core_data *mc = d->mc_ptr;
		bool mem_from_gres = false;

		od->min_nodes = d->min_nodes;
		od->has_max_nodes = d->max_nodes && (d->max_nodes != NO_VAL);
		od->max_nodes = d->max_nodes;
		od->num_tasks = (d->num_tasks == NO_VAL) ? 0 : d->num_tasks;
		od->min_cpus = d->min_cpus;
		od->has_max_cpus = (d->max_cpus != NO_VAL) && d->max_cpus;
		od->max_cpus = d->max_cpus;
		/* -c as given, 0 when not (whether DefCpuPerGPU applies
		 * depends on it: cons_tres's _set_gpu_defaults) */
		od->cpus_per_task = (job_ptr->bit_flags & JOB_CPUS_SET) ?
				    _val16(d->cpus_per_task) : 0;
		od->ntasks_per_node = _val16(d->ntasks_per_node);
		od->pn_min_cpus = d->pn_min_cpus;
		if (mc) {
			od->ntasks_per_socket = _val16(mc->ntasks_per_socket);
			od->ntasks_per_core = _val16(mc->ntasks_per_core);
			od->ntasks_per_board = _val16(mc->ntasks_per_board);
			od->threads_per_core = _val16(mc->threads_per_core);
			od->sockets_per_node = _val16(mc->sockets_per_node);
			od->cores_per_socket = _val16(mc->cores_per_socket);
		}
		od->pn_min_tmp_disk = d->pn_min_tmp_disk;
		od->contiguous = d->contiguous;
		if (d->whole_node == WHOLE_NODE_REQUIRED)
			od->share = SWASM_SHARE_EXCLUSIVE;
		else if (d->whole_node == WHOLE_NODE_USER)
			od->share = SWASM_SHARE_EXCLUSIVE_USER;
		else if (d->whole_node == WHOLE_NODE_MCS)
			od->share = SWASM_SHARE_EXCLUSIVE_MCS;
		else if (d->share_res == 1)
			od->share = SWASM_SHARE_OVERSUBSCRIBE;
		else
			od->share = SWASM_SHARE_PARTITION_DEFAULT;
		od->has_core_spec = (d->core_spec != NO_VAL16);
		od->core_spec = d->core_spec;
		od->overcommit = d->overcommit;
		od->spread_job = (job_ptr->bit_flags & SPREAD_JOB);
		if (d->req_node_bitmap && (bit_set_count(d->req_node_bitmap) > 0)) {
			swasm_bitmap *b = arena_alloc(arena, sizeof(*b));
			*b = swasm_records_bitmap(d->req_node_bitmap);
			od->required_nodes = b;
		}
		if (d->exc_node_bitmap && (bit_set_count(d->exc_node_bitmap) > 0)) {
			swasm_bitmap *b = arena_alloc(arena, sizeof(*b));
			*b = swasm_records_bitmap(d->exc_node_bitmap);
			od->excluded_nodes = b;
		}
		od->features = d->features;
		od->task_dist = d->task_dist;
		od->plane_size = _val16(d->plane_size);
		od->cpu_bind_type = d->cpu_bind_type;
		if (job_ptr->gres_list_req && list_count(job_ptr->gres_list_req)) {
			swasm_gres_request *g;
			gres_state_t *gs;
			ListIterator itr;
			size_t k = 0;

			g = arena_alloc(arena, list_count(job_ptr->gres_list_req) *
						       sizeof(*g));
			itr = list_iterator_create(job_ptr->gres_list_req);
			while ((gs = list_next(itr))) {
				gres_job_state_t *js = gs->gres_data;
				if (!js)
					continue;
				_gres_request(gs, &g[k++]);
				if ((js->mem_per_gres && (js->mem_per_gres != NO_VAL64)) ||
				    (js->def_mem_per_gres &&
				     (js->def_mem_per_gres != NO_VAL64)))
					mem_from_gres = true;
			}
			list_iterator_destroy(itr);
			od->gres = g;
			od->n_gres = k;
		}
		if (job_ptr->bit_flags & GRES_ENFORCE_BIND)
			od->gres_flags |= SWASM_GRES_ENFORCE_BINDING;
		if (job_ptr->bit_flags & GRES_DISABLE_BIND)
			od->gres_flags |= SWASM_GRES_DISABLE_BINDING;
		/* A memory the user did not set gives way to a per-GPU
		 * memory (cons_tres: !JOB_MEM_SET and
		 * gres_select_util_job_mem_set): the contract says none
		 * and the plugin applies the per-GPU figure. */
		if (mem_from_gres && !(job_ptr->bit_flags & JOB_MEM_SET))
			od->memory.kind = SWASM_MEMORY_NONE;
		else
			od->memory = swasm_records_memory(d->pn_min_memory);
		od->nice = (int32_t) ((int64_t) d->nice - NICE_OFFSET);
		od->submit_time = d->submit_time;
		od->begin_time = d->begin_time;
		od->accrue_time = d->accrue_time;
	}
	out->has_total_cpus = job_ptr->total_cpus && (job_ptr->total_cpus != NO_VAL);
	out->total_cpus = job_ptr->total_cpus;

	if (with_resources && job_ptr->job_resrcs &&
	    job_ptr->job_resrcs->node_bitmap) {
		swasm_job_resources *r = arena_alloc(arena, sizeof(*r));
		_resources(arena, job_ptr, r);
		out->resources = r;
	}
	return true;
}

/* ---- answers ---- */

extern const char *records_check(const swasm_job_resources *res, bitstr_t *avail)
{
	size_t set = 0;

	if (res->nodes.len > node_record_count)
		return "its node bitmap is larger than the node table";
	for (uint32_t i = 0; i < res->nodes.len; i++) {
		if (!(res->nodes.words[i / 64] & (UINT64_C(1) << (i % 64))))
			continue;
		if ((i >= bit_size(avail)) || !bit_test(avail, i))
			return "it names a node that was not a candidate";
		set++;
	}
	if (!set)
		return "it names no node";
	for (size_t k = 0; k < res->n_per_node; k++) {
		const swasm_node_resources *p = &res->per_node[k];
		node_record_t *node_ptr;
		uint32_t i = p->node_index;

		if ((i >= res->nodes.len) ||
		    !(res->nodes.words[i / 64] & (UINT64_C(1) << (i % 64))))
			return "it gives resources on a node it does not name";
		node_ptr = node_record_table_ptr[i];
		if (!node_ptr)
			return "it gives resources on a node that does not exist";
		for (uint32_t c = node_ptr->tot_cores; c < p->cores.len; c++) {
			if (p->cores.words[c / 64] & (UINT64_C(1) << (c % 64)))
				return "it gives a core past a node's cores";
		}
	}
	return NULL;
}

/* The gres_node_state_t of `gs`'s GRES on a node, or NULL. */
static gres_node_state_t *_node_gres_state(node_record_t *node_ptr,
					   uint32_t plugin_id)
{
	gres_state_t *ns;

	if (!node_ptr->gres_list)
		return NULL;
	ns = list_find_first(node_ptr->gres_list, gres_find_id, &plugin_id);
	return ns ? ns->gres_data : NULL;
}

/* The allocation of `per` matching a GRES request: same name, and the
 * request's type when it names one. */
static const swasm_gres_allocation *_find_alloc(const swasm_node_resources *per,
						const char *name,
						const char *type_name)
{
	for (size_t g = 0; g < per->n_gres; g++) {
		const swasm_gres_allocation *a = &per->gres[g];
		if (xstrcmp(a->name, name))
			continue;
		if (type_name && xstrcmp(a->type_name, type_name))
			continue;
		return a;
	}
	return NULL;
}

/* gres_bit_select/gres_cnt_node_select of every GRES request, by node
 * index over the whole node table, as gres_select_filter_select_and_set
 * leaves them for gres_ctld_job_alloc. */
static int _apply_gres(job_record_t *job_ptr, const swasm_job_resources *res)
{
	gres_state_t *gs;
	ListIterator itr;
	int rc = SLURM_SUCCESS;

	if (!job_ptr->gres_list_req)
		return SLURM_SUCCESS;
	itr = list_iterator_create(job_ptr->gres_list_req);
	while ((gs = list_next(itr))) {
		gres_job_state_t *js = gs->gres_data;

		if (!js)
			continue;
		if (js->gres_bit_select) {
			for (int i = 0; i < js->total_node_cnt; i++)
				FREE_NULL_BITMAP(js->gres_bit_select[i]);
			xfree(js->gres_bit_select);
		}
		xfree(js->gres_cnt_node_select);
		js->total_node_cnt = node_record_count;
		js->gres_bit_select = xcalloc(node_record_count,
					      sizeof(bitstr_t *));
		js->gres_cnt_node_select = xcalloc(node_record_count,
						   sizeof(uint64_t));
		js->total_gres = 0;
		for (size_t k = 0; k < res->n_per_node; k++) {
			const swasm_node_resources *per = &res->per_node[k];
			const swasm_gres_allocation *a;
			node_record_t *node_ptr = node_record_table_ptr[per->node_index];
			gres_node_state_t *ns;

			a = _find_alloc(per, gs->gres_name, js->type_name);
			if (!a || !a->count)
				continue;
			js->gres_cnt_node_select[per->node_index] = a->count;
			js->total_gres += a->count;
			if (!a->devices || !a->devices->len)
				continue;
			ns = _node_gres_state(node_ptr, gs->plugin_id);
			if (!ns || !ns->gres_bit_alloc) {
				error("select/wasm: %pJ: the plugin gave %s devices on node %s, which has none",
				      job_ptr, gs->gres_name, node_ptr->name);
				rc = SLURM_ERROR;
				break;
			}
			js->gres_bit_select[per->node_index] =
				bit_alloc(bit_size(ns->gres_bit_alloc));
			for (uint32_t b = 0; b < a->devices->len; b++) {
				if (!(a->devices->words[b / 64] &
				      (UINT64_C(1) << (b % 64))))
					continue;
				if (b >= bit_size(ns->gres_bit_alloc)) {
					error("select/wasm: %pJ: the plugin gave %s device %u on node %s, which has %"BITSTR_FMT,
					      job_ptr, gs->gres_name, b,
					      node_ptr->name,
					      bit_size(ns->gres_bit_alloc));
					rc = SLURM_ERROR;
					break;
				}
				bit_set(js->gres_bit_select[per->node_index], b);
			}
			if (rc != SLURM_SUCCESS)
				break;
		}
		if (rc != SLURM_SUCCESS)
			break;
	}
	list_iterator_destroy(itr);
	return rc;
}

extern int records_apply(job_record_t *job_ptr, const swasm_job_resources *res,
			 uint16_t node_req, uint16_t cr_type, bool linear)
{
	struct job_details *d = job_ptr->details;
	job_resources_t *jr;
	bitstr_t *nodes = bit_alloc(node_record_count);
	int n = 0, c = 0, rc;
	uint32_t total = 0;

	for (uint32_t i = 0; i < res->nodes.len; i++) {
		if (res->nodes.words[i / 64] & (UINT64_C(1) << (i % 64)))
			bit_set(nodes, i);
	}
	n = bit_set_count(nodes);

	/* the fields cons_common's _job_test sets, in its order */
	jr = create_job_resources();
	jr->node_bitmap = nodes;
	jr->nodes = bitmap2node_name_sortable(nodes, false);
	jr->nhosts = n;
	jr->threads_per_core = d->mc_ptr ? d->mc_ptr->threads_per_core : NO_VAL16;
	jr->cr_type = cr_type;
	if (!linear)
		jr->node_req = node_req;
	jr->cpus = xcalloc(n, sizeof(uint16_t));
	jr->cpus_used = xcalloc(n, sizeof(uint16_t));
	jr->memory_allocated = xcalloc(n, sizeof(uint64_t));
	jr->memory_used = xcalloc(n, sizeof(uint64_t));
	jr->whole_node = d->whole_node;
	if ((rc = build_job_resources(jr)) != SLURM_SUCCESS) {
		error("select/wasm: %pJ: build_job_resources failed", job_ptr);
		free_job_resources(&jr);
		return rc;
	}

	/* per node, in node order: CPUs, memory and cores of the answer */
	for (int i = 0, j = 0; j < n; i++) {
		const swasm_node_resources *per = NULL;
		node_record_t *node_ptr;

		if (!bit_test(nodes, i))
			continue;
		node_ptr = node_record_table_ptr[i];
		for (size_t k = 0; k < res->n_per_node; k++) {
			if (res->per_node[k].node_index == i) {
				per = &res->per_node[k];
				break;
			}
		}
		if (!per) {
			error("select/wasm: %pJ: the plugin gave no resources on node %s",
			      job_ptr, node_ptr->name);
			free_job_resources(&jr);
			return SLURM_ERROR;
		}
		jr->cpus[j] = per->cpus;
		jr->memory_allocated[j] = per->memory;
		total += per->cpus;
		for (uint32_t b = 0; b < node_ptr->tot_cores; b++) {
			if ((b < per->cores.len) &&
			    (per->cores.words[b / 64] & (UINT64_C(1) << (b % 64))))
				bit_set(jr->core_bitmap, c + b);
		}
		c += node_ptr->tot_cores;
		j++;
	}

	/* ncpus as cons_common's _job_test computes it before distributing
	 * tasks; select/linear's _build_select_struct: the CPUs allocated */
	jr->ncpus = n;
	if (d->ntasks_per_node && (d->ntasks_per_node != NO_VAL16))
		jr->ncpus *= d->ntasks_per_node;
	jr->ncpus = MAX(jr->ncpus, d->min_cpus);
	jr->ncpus = MAX(jr->ncpus, n * d->pn_min_cpus);
	if (d->overcommit && d->num_tasks && (d->num_tasks != NO_VAL))
		jr->ncpus = MIN(total, d->num_tasks);
	if (linear)
		jr->ncpus = total;

	job_ptr->job_resrcs = jr;
	if ((rc = _apply_gres(job_ptr, res)) != SLURM_SUCCESS) {
		free_job_resources(&job_ptr->job_resrcs);
		return rc;
	}
	if (build_job_resources_cpu_array(jr) < 0) {
		error("select/wasm: %pJ: build_job_resources_cpu_array failed",
		      job_ptr);
		free_job_resources(&job_ptr->job_resrcs);
		return SLURM_ERROR;
	}
	job_ptr->total_cpus = res->ncpus;
	return SLURM_SUCCESS;
}
