/*
 * records.c: the gres shims' translations between Slurm 22.05's gres records
 * and the C ABI (see records.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "config.h"
#include "src/common/bitstring.h"
#include "src/common/env.h"
#include "src/common/hostlist.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmd/slurmd/slurmd.h"

#include "records.h"

/* slurmd's configuration: defined by slurmd only (weak: NULL elsewhere). */
#pragma weak conf

/* ---- the node ---- */

/*
 * The counts of a node's `Gres=` (gpu:2,mps:200 or gpu:a100:4), as Slurm's
 * gres_init_node_config reads them: name[:type][:count], the count with an
 * optional K/M/G suffix, 1 when absent.
 */
static swasm_gres_count *_configured(arena_t *arena, const char *gres, size_t *n)
{
	size_t count = 0;
	const char *const *tokens = swasm_records_tokens(arena, gres, &count);
	swasm_gres_count *out;

	*n = 0;
	if (!count)
		return NULL;
	out = arena_alloc(arena, count * sizeof(*out));
	for (size_t i = 0; i < count; i++) {
		char *tok = arena_strdup(arena, tokens[i]);
		char *first = strchr(tok, ':'), *second = NULL, *num = NULL;
		uint64_t value = 1;

		if (first) {
			*first++ = '\0';
			if ((second = strchr(first, ':'))) {
				*second++ = '\0';
				num = second;
			} else if (isdigit((unsigned char) first[0])) {
				num = first;
				first = NULL;
			}
		}
		if (num) {
			char *end = NULL;
			uint64_t mult;
			value = strtoull(num, &end, 10);
			if ((mult = suffix_mult(end)) != NO_VAL64)
				value *= mult;
		}
		out[*n].name = tok;
		out[*n].type_name = (first && first[0]) ? first : NULL;
		out[*n].count = value;
		(*n)++;
	}
	return out;
}

extern void records_node(arena_t *arena, uint32_t cpu_cnt,
			 swasm_node_hardware *out)
{
	node_record_t *node_ptr = NULL;

	memset(out, 0, sizeof(*out));
	out->cpus = cpu_cnt;
	if (!&conf || !conf || !conf->node_name)
		return;
	out->name = arena_strdup(arena, conf->node_name);
	if (!(node_ptr = find_node_record(conf->node_name)) ||
	    !node_ptr->config_ptr) {
		out->sockets = conf->conf_sockets;
		out->cores_per_socket = conf->conf_cores;
		out->threads_per_core = conf->conf_threads;
		return;
	}
	out->sockets = node_ptr->config_ptr->tot_sockets;
	out->cores_per_socket = node_ptr->config_ptr->cores;
	out->threads_per_core = node_ptr->config_ptr->threads;
	if (!out->cpus)
		out->cpus = node_ptr->config_ptr->cpus;
	out->configured = _configured(arena, node_ptr->config_ptr->gres,
				      &out->n_configured);
}

/* ---- gres.conf records ---- */

/* The expanded File= of a record (a hostlist expression), in the arena. */
static const char *const *_files(arena_t *arena, const char *file, size_t *n)
{
	hostlist_t hl;
	const char **out;
	char *one;
	int count;

	*n = 0;
	if (!file || !file[0] || !(hl = hostlist_create(file)))
		return NULL;
	count = hostlist_count(hl);
	out = arena_alloc(arena, (count ? count : 1) * sizeof(*out));
	while ((one = hostlist_shift(hl)) && (*n < (size_t) count)) {
		out[(*n)++] = arena_strdup(arena, one);
		free(one);
	}
	hostlist_destroy(hl);
	return out;
}

/*
 * The Flags= tokens a record was parsed from (gres.c's _parse_gres_config
 * turned them into config_flags): CountOnly, the sharing mode of a shared
 * GRES, and the env flags unless they are gres.c's default for a GPU
 * (GRES_CONF_ENV_DEF); a GPU with none was given no_gpu_env.
 */
static const char *const *_flags(arena_t *arena, gres_slurmd_conf_t *r,
				 size_t *n)
{
	const char **out = arena_alloc(arena, 8 * sizeof(*out));
	uint32_t f = r->config_flags;

	*n = 0;
	if (f & GRES_CONF_COUNT_ONLY)
		out[(*n)++] = "CountOnly";
	if (f & GRES_CONF_SHARED)
		out[(*n)++] = (f & GRES_CONF_ONE_SHARING) ? "one_sharing" :
							    "all_sharing";
	if (f & GRES_CONF_ENV_DEF)
		return out;
	if (f & GRES_CONF_ENV_NVML)
		out[(*n)++] = "nvidia_gpu_env";
	if (f & GRES_CONF_ENV_RSMI)
		out[(*n)++] = "amd_gpu_env";
	if (f & GRES_CONF_ENV_ONEAPI)
		out[(*n)++] = "intel_gpu_env";
	if (f & GRES_CONF_ENV_OPENCL)
		out[(*n)++] = "opencl_env";
	if (!(f & GRES_CONF_ENV_SET) && !xstrcasecmp(r->name, "gpu"))
		out[(*n)++] = "no_gpu_env";
	return out;
}

extern swasm_gres_conf_record *records_conf(arena_t *arena, List gres_conf_list,
					    uint32_t cores, size_t *n)
{
	swasm_gres_conf_record *out;
	gres_slurmd_conf_t *r;
	ListIterator itr;
	size_t i = 0;

	*n = gres_conf_list ? list_count(gres_conf_list) : 0;
	if (!*n)
		return NULL;
	out = arena_alloc(arena, *n * sizeof(*out));
	itr = list_iterator_create(gres_conf_list);
	while ((r = list_next(itr)) && (i < *n)) {
		swasm_gres_conf_record *o = &out[i++];
		char origin[64];

		/* gres.c keeps no line numbers: the record's position */
		snprintf(origin, sizeof(origin), "gres.conf record %zu (%s)",
			 i, r->name ? r->name : "?");
		o->origin = arena_strdup(arena, origin);
		o->name = arena_strdup(arena, r->name);
		o->type_name = arena_strdup(arena, r->type_name);
		if (r->config_flags & GRES_CONF_HAS_FILE)
			o->files = _files(arena, r->file, &o->n_files);
		o->count = r->count;
		if (r->cpus && r->cpus[0] && cores) {
			/* Cores= as written: abstract core indices */
			bitstr_t *b = bit_alloc(cores);
			if (!bit_unfmt(b, r->cpus)) {
				swasm_bitmap *bm = arena_alloc(arena, sizeof(*bm));
				*bm = swasm_records_bitmap_slice(arena, b, 0,
								 cores);
				o->cores = bm;
			} else {
				debug("gres/%s: Cores=%s of a %s record is outside the node's %u cores; not passed",
				      r->name, r->cpus, r->name, cores);
			}
			FREE_NULL_BITMAP(b);
		}
		o->links = arena_strdup(arena, r->links);
		o->flags = _flags(arena, r, &o->n_flags);
		o->unique_id = arena_strdup(arena, r->unique_id);
	}
	list_iterator_destroy(itr);
	*n = i;
	return out;
}

/* Whether Slurm's record `r` and the plugin's `p` name the same devices. */
static bool _same_record(gres_slurmd_conf_t *r, const swasm_gres_conf_record *p)
{
	arena_t arena = { 0 };
	const char *const *files;
	size_t n = 0;
	bool same;

	if (xstrcmp(r->name, p->name) || xstrcmp(r->type_name, p->type_name) ||
	    (r->count != p->count))
		return false;
	files = (r->config_flags & GRES_CONF_HAS_FILE) ?
		_files(&arena, r->file, &n) : NULL;
	same = (n == p->n_files);
	for (size_t i = 0; same && (i < n); i++)
		same = !xstrcmp(files[i], p->files[i]);
	arena_free(&arena);
	return same;
}

/* Whether Slurm's Cores= string `cpus` names the cores of `b` (NULL: none),
 * on a node of `cores` cores. */
static bool _same_cores(const char *cpus, const swasm_bitmap *b, uint32_t cores)
{
	bitstr_t *parsed;
	bool same;

	if (!cpus || !cpus[0] || !cores)
		return !b || !b->len;
	if (!b || !b->len)
		return false;
	parsed = bit_alloc(cores);
	same = !bit_unfmt(parsed, (char *) cpus);
	for (uint32_t i = 0; same && (i < cores); i++) {
		int bit = (i < b->len) ? ((b->words[i / 64] >> (i % 64)) & 1) : 0;
		same = (bit == (bit_test(parsed, i) ? 1 : 0));
	}
	FREE_NULL_BITMAP(parsed);
	return same;
}

/*
 * Gives Slurm's record `r` the cores, links and unique id of the plugin's
 * `p` where they differ (gres/mps gives each MPS record its GPU's cores, as
 * Slurm's gres_c_s_init_share_devices does). Cores are copied, string and
 * CPU bitmap, from a record of `all` (Slurm's records of the node) that has
 * those cores, so that they read as gres.c parsed them; failing that they
 * are written as gres.c does without an abstract-to-machine map.
 */
static void _update_record(gres_slurmd_conf_t *r, const swasm_gres_conf_record *p,
			   List all, uint32_t cores, uint32_t cpu_cnt)
{
	gres_slurmd_conf_t *o = NULL;
	ListIterator itr;

	if (xstrcmp(r->links, p->links)) {
		xfree(r->links);
		r->links = xstrdup(p->links);
	}
	if (xstrcmp(r->unique_id, p->unique_id)) {
		xfree(r->unique_id);
		r->unique_id = xstrdup(p->unique_id);
	}
	if (_same_cores(r->cpus, p->cores, cores))
		return;
	xfree(r->cpus);
	FREE_NULL_BITMAP(r->cpus_bitmap);
	if (!p->cores || !p->cores->len)
		return;
	itr = list_iterator_create(all);
	while ((o = list_next(itr)))
		if ((o != r) && o->cpus && _same_cores(o->cpus, p->cores, cores))
			break;
	list_iterator_destroy(itr);
	if (o) {
		r->cpus = xstrdup(o->cpus);
		if (o->cpus_bitmap)
			r->cpus_bitmap = bit_copy(o->cpus_bitmap);
		return;
	} else {
		bitstr_t *b = bit_alloc(p->cores->len);
		for (uint32_t i = 0; i < p->cores->len; i++)
			if ((p->cores->words[i / 64] >> (i % 64)) & 1)
				bit_set(b, i);
		r->cpus = bit_fmt_full(b);
		FREE_NULL_BITMAP(b);
		if (cpu_cnt) {
			r->cpus_bitmap = bit_alloc(cpu_cnt);
			if (bit_unfmt(r->cpus_bitmap, r->cpus))
				FREE_NULL_BITMAP(r->cpus_bitmap);
		}
	}
}

/* A new gres_slurmd_conf_t from the plugin's record, its config_flags as
 * gres.c's parser would have set them for such a line. */
static gres_slurmd_conf_t *_new_record(const swasm_gres_conf_record *p,
				       uint32_t cpu_cnt)
{
	gres_slurmd_conf_t *r = xmalloc(sizeof(*r));
	uint32_t env = 0;
	bool sharing_given = false;

	r->name = xstrdup(p->name);
	r->type_name = xstrdup(p->type_name);
	r->count = p->count;
	r->cpu_cnt = cpu_cnt;
	r->links = xstrdup(p->links);
	r->unique_id = xstrdup(p->unique_id);
	r->plugin_id = gres_build_id(r->name);
	if (r->type_name)
		r->config_flags |= GRES_CONF_HAS_TYPE;
	for (size_t i = 0; i < p->n_files; i++)
		xstrfmtcat(r->file, "%s%s", i ? "," : "", p->files[i]);
	if (p->n_files)
		r->config_flags |= GRES_CONF_HAS_FILE;
	if (p->cores && p->cores->len) {
		bitstr_t *b = bit_alloc(p->cores->len);
		for (uint32_t i = 0; i < p->cores->len; i++)
			if ((p->cores->words[i / 64] >> (i % 64)) & 1)
				bit_set(b, i);
		r->cpus = bit_fmt_full(b);
		FREE_NULL_BITMAP(b);
		/* machine CPUs as gres.c does without an abs_to_mac map */
		if (cpu_cnt) {
			r->cpus_bitmap = bit_alloc(cpu_cnt);
			if (bit_unfmt(r->cpus_bitmap, r->cpus))
				FREE_NULL_BITMAP(r->cpus_bitmap);
		}
	}
	for (size_t i = 0; i < p->n_flags; i++) {
		const char *f = p->flags[i];
		if (!xstrcasecmp(f, "CountOnly"))
			r->config_flags |= GRES_CONF_COUNT_ONLY;
		else if (!xstrcasecmp(f, "one_sharing")) {
			r->config_flags |= GRES_CONF_ONE_SHARING;
			sharing_given = true;
		} else if (!xstrcasecmp(f, "all_sharing"))
			sharing_given = true;
		else if (!xstrcasecmp(f, "nvidia_gpu_env"))
			env |= GRES_CONF_ENV_NVML;
		else if (!xstrcasecmp(f, "amd_gpu_env"))
			env |= GRES_CONF_ENV_RSMI;
		else if (!xstrcasecmp(f, "intel_gpu_env"))
			env |= GRES_CONF_ENV_ONEAPI;
		else if (!xstrcasecmp(f, "opencl_env"))
			env |= GRES_CONF_ENV_OPENCL;
	}
	r->config_flags |= env;
	if (!xstrcasecmp(r->name, "mps") || !xstrcasecmp(r->name, "shard")) {
		r->config_flags |= GRES_CONF_SHARED;
		if (!sharing_given)
			r->config_flags |= GRES_CONF_ONE_SHARING;
	}
	return r;
}

extern void records_conf_apply(List gres_conf_list, const char *name,
			       const swasm_node_config_result *result,
			       uint32_t cores, uint32_t cpu_cnt)
{
	List old = list_create(NULL);
	gres_slurmd_conf_t *r, **mine;
	size_t n_mine = 0, n_result = 0, reused = 0;
	bool placed = false;

	if (!gres_conf_list)
		return;
	for (size_t i = 0; i < result->n_records; i++)
		if (!xstrcmp(result->records[i].name, name))
			n_result++;
	mine = xcalloc(n_result + 1, sizeof(*mine));
	while ((r = list_pop(gres_conf_list)))
		list_append(old, r);

	/* the plugin's records of `name`, Slurm's own where they match */
	for (size_t i = 0; i < result->n_records; i++) {
		const swasm_gres_conf_record *p = &result->records[i];
		ListIterator itr;

		if (xstrcmp(p->name, name))
			continue;
		itr = list_iterator_create(old);
		while ((r = list_next(itr))) {
			if (!xstrcmp(r->name, name) && _same_record(r, p)) {
				list_remove(itr);
				break;
			}
		}
		list_iterator_destroy(itr);
		if (r) {
			_update_record(r, p, old, cores, cpu_cnt);
			reused++;
		} else {
			r = _new_record(p, cpu_cnt);
		}
		mine[n_mine++] = r;
	}

	/* back in Slurm's order, ours where the first of ours was */
	while ((r = list_pop(old))) {
		if (xstrcmp(r->name, name)) {
			list_append(gres_conf_list, r);
			continue;
		}
		if (!placed) {
			for (size_t i = 0; i < n_mine; i++)
				list_append(gres_conf_list, mine[i]);
			placed = true;
		}
		/* a record of ours the plugin did not keep */
		destroy_gres_slurmd_conf(r);
	}
	if (!placed)
		for (size_t i = 0; i < n_mine; i++)
			list_append(gres_conf_list, mine[i]);
	debug2("gres/%s: %zu records after node_config_load (%zu as Slurm parsed them)",
	       name, n_mine, reused);
	xfree(mine);
	FREE_NULL_LIST(old);
}

/* ---- environments ---- */

extern void records_env_apply(char ***env, const swasm_env_change_list *edits)
{
	for (size_t i = 0; i < edits->n_items; i++) {
		const swasm_env_change *c = &edits->items[i];
		if (c->kind == SWASM_ENV_SET)
			env_array_overwrite(env, c->key, c->value);
		else if (*env)
			unsetenvp(*env, c->key);
	}
}

extern uint32_t records_env_flags(gres_internal_flags_t flags)
{
	uint32_t out = 0;

	if (flags & GRES_INTERNAL_FLAG_VERBOSE)
		out |= SWASM_GRES_ENV_VERBOSE;
	if (flags & GRES_INTERNAL_FLAG_PROTECT_ENV)
		out |= SWASM_GRES_ENV_PROTECT_ENV;
	return out;
}

/* ---- devices ---- */

extern bool records_devices_equal(List list, const swasm_gres_device_list *devices)
{
	gres_device_t *d;
	ListIterator itr;
	size_t i = 0;
	bool same;

	if (!list)
		return devices->n_items == 0;
	if (list_count(list) != devices->n_items)
		return false;
	same = true;
	itr = list_iterator_create(list);
	while (same && (d = list_next(itr))) {
		const swasm_gres_device *p = &devices->items[i++];
		same = (d->index == p->index) && (d->dev_num == p->dev_num) &&
		       (d->dev_desc.major == p->major) &&
		       (d->dev_desc.minor == p->minor) &&
		       !xstrcmp(d->path, p->path) &&
		       !xstrcmp(d->unique_id, p->unique_id);
	}
	list_iterator_destroy(itr);
	return same;
}

extern List records_devices(const swasm_gres_device_list *devices)
{
	List list;

	if (!devices->n_items)
		return NULL;
	list = list_create(destroy_gres_device);
	for (size_t i = 0; i < devices->n_items; i++) {
		const swasm_gres_device *p = &devices->items[i];
		gres_device_t *d = xmalloc(sizeof(*d));
		struct stat st;

		d->index = p->index;
		d->dev_num = p->dev_num;
		d->dev_desc.major = p->major;
		d->dev_desc.minor = p->minor;
		/* gres_common.c's _set_gres_device_desc: block or char */
		d->dev_desc.type = ((stat(p->path, &st) == 0) &&
				    S_ISBLK(st.st_mode)) ? DEV_TYPE_BLOCK :
							   DEV_TYPE_CHAR;
		d->path = xstrdup(p->path);
		d->unique_id = xstrdup(p->unique_id);
		list_append(list, d);
	}
	return list;
}

/* ---- epilog ---- */

extern void records_epilog_job(arena_t *arena, const char *name,
			       gres_epilog_info_t *gres_ei, swasm_job *out)
{
	uint32_t n = gres_ei->node_cnt;
	swasm_job_resources *res = arena_alloc(arena, sizeof(*res));
	swasm_node_resources *per_node;
	uint64_t *words;

	memset(out, 0, sizeof(*out));
	out->name = "";
	out->state = SWASM_JOB_RUNNING;
	out->resources = res;
	if (!n)
		return;
	words = arena_alloc(arena, ((n + 63) / 64) * sizeof(uint64_t));
	for (uint32_t i = 0; i < n; i++)
		words[i / 64] |= 1ULL << (i % 64);
	res->nodes.len = n;
	res->nodes.words = words;
	per_node = arena_alloc(arena, n * sizeof(*per_node));
	for (uint32_t i = 0; i < n; i++) {
		bitstr_t *b = gres_ei->gres_bit_alloc ?
			      gres_ei->gres_bit_alloc[i] : NULL;
		uint64_t cnt = gres_ei->gres_cnt_node_alloc ?
			       gres_ei->gres_cnt_node_alloc[i] : 0;
		swasm_gres_allocation *a;

		per_node[i].node_index = i;
		if (!b && !cnt)
			continue;
		a = arena_alloc(arena, sizeof(*a));
		a->name = name;
		a->count = cnt ? cnt : (b ? bit_set_count(b) : 0);
		if (b) {
			swasm_bitmap *bm = arena_alloc(arena, sizeof(*bm));
			*bm = swasm_records_bitmap(b);
			a->devices = bm;
		}
		per_node[i].gres = a;
		per_node[i].n_gres = 1;
	}
	res->per_node = per_node;
	res->n_per_node = n;
}
