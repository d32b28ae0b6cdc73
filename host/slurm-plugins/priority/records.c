/*
 * records.c: Slurm's records as the C ABI's structs (see records.h).
 */
#include <string.h>
#include <strings.h>

#include "config.h"
#include "src/common/assoc_mgr.h"
#include "src/common/bitstring.h"
#include "src/common/list.h"
#include "src/common/read_config.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "idmap.h"
#include "records.h"

/* slurmctld's, absent from the clients that load the plugin (sshare): weak,
 * so that it loads there too; only slurmctld calls what reads them. */
#pragma weak part_list
#pragma weak last_part_update

/* ---- the partition table ---- */

/* Partitions in part_list order: a job's partition index is its position. */
static swasm_part_table_t parts;
static time_t parts_update;

extern bool records_partitions_changed(void)
{
	return parts_update != last_part_update;
}

/* Non-zero counts of `cnt` (slurmctld_tres_cnt long) by TRES name; the
 * names copied into the arena with `copy`, else assoc_mgr's. */
static const swasm_tres_amount *_tres(arena_t *arena, const uint64_t *cnt,
				      bool copy, size_t *n)
{
	swasm_tres_amount *out;
	size_t k = 0;

	*n = 0;
	if (!cnt)
		return NULL;
	out = arena_alloc(arena, slurmctld_tres_cnt * sizeof(*out));
	for (int i = 0; i < slurmctld_tres_cnt; i++) {
		if (!cnt[i] || (cnt[i] == NO_CONSUME_VAL64) ||
		    (cnt[i] == NO_VAL64) || (cnt[i] == INFINITE64))
			continue;
		out[k].name = copy ? arena_strdup(arena, assoc_mgr_tres_name_array[i])
				   : assoc_mgr_tres_name_array[i];
		out[k].count = cnt[i];
		k++;
	}
	*n = k;
	return out;
}

/* The priority keys of slurm_conf in the forms slurm.conf takes, so that a
 * plugin reads them as it reads slurm.conf. */
static void _priority_keys(arena_t *arena, swasm_key_value *kv, size_t *k)
{
	static const char *resets[] = { "NONE", "NOW", "DAILY", "WEEKLY",
					"MONTHLY", "QUARTERLY", "YEARLY" };
	char *flags = priority_flags_string(slurm_conf.priority_flags);
	uint16_t reset = slurm_conf.priority_reset_period;

#define KEY(name, ...) do {                                                   \
		char *v = xstrdup_printf(__VA_ARGS__);                        \
		kv[*k].key = name;                                             \
		kv[*k].value = arena_strdup(arena, v);                         \
		xfree(v);                                                      \
		(*k)++;                                                        \
	} while (0)
	KEY("PriorityWeightAge", "%u", slurm_conf.priority_weight_age);
	KEY("PriorityWeightAssoc", "%u", slurm_conf.priority_weight_assoc);
	KEY("PriorityWeightFairshare", "%u", slurm_conf.priority_weight_fs);
	KEY("PriorityWeightJobSize", "%u", slurm_conf.priority_weight_js);
	KEY("PriorityWeightPartition", "%u", slurm_conf.priority_weight_part);
	KEY("PriorityWeightQOS", "%u", slurm_conf.priority_weight_qos);
	KEY("PriorityWeightTRES", "%s",
	    slurm_conf.priority_weight_tres ? slurm_conf.priority_weight_tres : "");
#define DURATION(s) (s) / 86400, (s) / 3600 % 24, (s) / 60 % 60, (s) % 60
	KEY("PriorityMaxAge", "%u-%02u:%02u:%02u",
	    DURATION(slurm_conf.priority_max_age));
	KEY("PriorityDecayHalfLife", "%u-%02u:%02u:%02u",
	    DURATION(slurm_conf.priority_decay_hl));
	KEY("PriorityCalcPeriod", "%u-%02u:%02u:%02u",
	    DURATION(slurm_conf.priority_calc_period));
#undef DURATION
	KEY("PriorityUsageResetPeriod", "%s",
	    reset < ARRAY_SIZE(resets) ? resets[reset] : "NONE");
	KEY("PriorityFavorSmall", "%s",
	    slurm_conf.priority_favor_small ? "YES" : "NO");
	KEY("PriorityFlags", "%s", flags);
	KEY("FairShareDampeningFactor", "%u", slurm_conf.fs_dampening_factor);
	KEY("AccountingStorageType", "%s",
	    slurm_conf.accounting_storage_type ?
	    slurm_conf.accounting_storage_type : "");
#undef KEY
	xfree(flags);
}

#define N_PRIORITY_KEYS 15

extern void records_config(arena_t *arena, swasm_priority_config *out)
{
	assoc_mgr_lock_t locks = { .tres = READ_LOCK };
	swasm_cluster_config *c = &out->cluster;
	swasm_key_value *raw;
	size_t k;
	swasm_partition *partitions;
	swasm_tres_list *part_tres;
	swasm_tres_amount *cluster_tres;
	int i;

	memset(out, 0, sizeof(*out));
	/* every option as scontrol shows it, then the priority keys in
	 * slurm.conf's own forms, which win (a plugin keeps the last) */
	raw = swasm_records_cluster(arena, c, N_PRIORITY_KEYS);
	k = c->n_raw;
	_priority_keys(arena, raw, &k);
	c->n_raw = k;

	/* partitions, in part_list order, each with its TRES */
	partitions = swasm_records_partitions(arena, &parts);
	part_tres = arena_alloc(arena, (parts.n ? parts.n : 1) * sizeof(*part_tres));
	for (i = 0; i < parts.n; i++)
		part_tres[i].items = _tres(arena, parts.parts[i]->tres_cnt,
					   false, &part_tres[i].n_items);
	parts_update = last_part_update;
	out->partitions = partitions;
	out->n_partitions = parts.n;
	out->partition_tres = part_tres;
	out->n_partition_tres = parts.n;

	out->cluster_cpus = (cluster_cpus == NO_VAL) ? 0 : cluster_cpus;
	out->cluster_nodes = node_record_count;
	assoc_mgr_lock(&locks);
	cluster_tres = arena_alloc(arena, (g_tres_count ? g_tres_count : 1) *
					      sizeof(*cluster_tres));
	k = 0;
	for (i = 0; assoc_mgr_tres_array && (i < g_tres_count); i++) {
		if (!assoc_mgr_tres_array[i] || !assoc_mgr_tres_array[i]->count)
			continue;
		cluster_tres[k].name = assoc_mgr_tres_name_array[i];
		cluster_tres[k].count = assoc_mgr_tres_array[i]->count;
		k++;
	}
	assoc_mgr_unlock(&locks);
	out->cluster_tres = cluster_tres;
	out->n_cluster_tres = k;
}

extern int records_tres_index(const char *name)
{
	for (int i = 0; name && (i < slurmctld_tres_cnt); i++) {
		if (assoc_mgr_tres_name_array[i] &&
		    !strcasecmp(assoc_mgr_tres_name_array[i], name))
			return i;
	}
	return -1;
}

/* ---- jobs ---- */

extern bool records_job(arena_t *arena, job_record_t *job_ptr,
			time_t start_floor, swasm_job *out)
{
	struct job_details *d = job_ptr->details;
	swasm_job_details *od = &out->details;
	uint32_t *partitions;
	size_t n = 0;

	swasm_records_job_identity(job_ptr, out);

	if (job_ptr->part_ptr_list) {
		/*
		 * The contract's first partition is part_ptr: multifactor's
		 * job_ptr->priority is the one of part_ptr, which the schedulers
		 * move to the partition they last tried (job_scheduler.c
		 * schedule(), backfill.c _attempt_backfill()), not the first of
		 * part_ptr_list; the others follow in list order, for the rows
		 * that fill priority_array (factors.c).
		 */
		part_record_t *p;
		ListIterator itr;
		int index;
		partitions = arena_alloc(arena,
					 (list_count(job_ptr->part_ptr_list) + 1) *
						 sizeof(uint32_t));
		if (job_ptr->part_ptr) {
			index = swasm_records_part_index(&parts,
							 job_ptr->part_ptr);
			if (index < 0)
				return false;
			partitions[n++] = index;
		}
		itr = list_iterator_create(job_ptr->part_ptr_list);
		while ((p = list_next(itr))) {
			if (p == job_ptr->part_ptr)
				continue;
			index = swasm_records_part_index(&parts, p);
			if (index < 0) {
				list_iterator_destroy(itr);
				return false;
			}
			partitions[n++] = index;
		}
		list_iterator_destroy(itr);
	} else if (job_ptr->part_ptr) {
		int index = swasm_records_part_index(&parts, job_ptr->part_ptr);
		if (index < 0)
			return false;
		partitions = arena_alloc(arena, sizeof(uint32_t));
		partitions[n++] = index;
	} else {
		partitions = NULL;
	}
	out->partitions = partitions;
	out->n_partitions = n;

	out->qos = job_ptr->qos_ptr ? job_ptr->qos_ptr->name : NULL;
	out->state = job_ptr->job_state & JOB_STATE_BASE;
	if (out->state > SWASM_JOB_OOM)
		out->state = SWASM_JOB_FAILED;
	out->priority = job_ptr->priority;
	out->direct_set_priority = job_ptr->direct_set_prio;
	out->site_factor = (int64_t) job_ptr->site_factor - NICE_OFFSET;
	out->has_time_limit = (job_ptr->time_limit != NO_VAL) &&
			      (job_ptr->time_limit != INFINITE);
	out->time_limit = job_ptr->time_limit;
	out->has_time_min = job_ptr->time_min && (job_ptr->time_min != NO_VAL);
	out->time_min = job_ptr->time_min;
	out->start_time = job_ptr->start_time;
	if (start_floor && job_ptr->start_time &&
	    (job_ptr->start_time < start_floor))
		out->start_time = start_floor;
	out->end_time = job_ptr->end_time;
	out->suspended_seconds = job_ptr->tot_sus_time;

	if (d) {
		od->min_nodes = d->min_nodes;
		od->has_max_nodes = d->max_nodes && (d->max_nodes != NO_VAL);
		od->max_nodes = d->max_nodes;
		od->num_tasks = (d->num_tasks == NO_VAL) ? 0 : d->num_tasks;
		od->min_cpus = d->min_cpus;
		od->has_max_cpus = (d->max_cpus != NO_VAL);
		od->max_cpus = d->max_cpus;
		od->cpus_per_task = (d->cpus_per_task == NO_VAL16) ? 1 :
				    d->cpus_per_task;
		od->ntasks_per_node = (d->ntasks_per_node == NO_VAL16) ? 0 :
				      d->ntasks_per_node;
		od->pn_min_cpus = d->pn_min_cpus;
		od->memory = swasm_records_memory(d->pn_min_memory);
		od->contiguous = d->contiguous;
		od->overcommit = d->overcommit;
		od->task_dist = d->task_dist;
		od->nice = (int32_t) ((int64_t) d->nice - NICE_OFFSET);
		od->submit_time = d->submit_time;
		od->begin_time = d->begin_time;
		od->accrue_time = d->accrue_time;
	}

	out->tres_requested = _tres(arena, job_ptr->tres_req_cnt, false,
				    &out->n_tres_requested);
	if (job_ptr->start_time && job_ptr->tres_alloc_cnt) {
		out->tres_allocated = _tres(arena, job_ptr->tres_alloc_cnt, false,
					    &out->n_tres_allocated);
		out->has_billable_tres =
			(job_ptr->billable_tres != (double) NO_VAL) &&
			(job_ptr->billable_tres >= 0);
		out->billable_tres = job_ptr->billable_tres;
	}
	out->has_total_cpus = job_ptr->total_cpus && (job_ptr->total_cpus != NO_VAL);
	out->total_cpus = job_ptr->total_cpus;
	return true;
}

#define HASH(h, v) idmap_hash((h), &(v), sizeof(v))

static uint64_t _hash_tres(uint64_t h, const swasm_tres_amount *t, size_t n)
{
	h = HASH(h, n);
	for (size_t i = 0; i < n; i++) {
		h = idmap_hash_str(h, t[i].name);
		h = HASH(h, t[i].count);
	}
	return h;
}

extern uint64_t records_job_fingerprint(const swasm_job *j)
{
	const swasm_job_details *d = &j->details;
	uint64_t h = IDMAP_FNV_SEED;

	h = idmap_hash_str(h, j->name);
	h = idmap_hash_str(h, j->account);
	h = idmap_hash_str(h, j->qos);
	h = HASH(h, j->user_id);
	h = HASH(h, j->assoc_id);
	h = HASH(h, j->n_partitions);
	if (j->n_partitions)
		h = idmap_hash(h, j->partitions,
			       j->n_partitions * sizeof(uint32_t));
	h = HASH(h, j->state);
	/* the priority itself changes at every pass: only whether the job is
	 * held, and an explicit priority, are the plugin's input */
	bool held = !j->priority;
	h = HASH(h, held);
	h = HASH(h, j->direct_set_priority);
	if (j->direct_set_priority)
		h = HASH(h, j->priority);
	h = HASH(h, j->site_factor);
	h = HASH(h, j->has_time_limit);
	h = HASH(h, j->time_limit);
	h = HASH(h, j->start_time);
	h = HASH(h, j->end_time);
	h = HASH(h, d->min_nodes);
	h = HASH(h, d->max_nodes);
	h = HASH(h, d->num_tasks);
	h = HASH(h, d->min_cpus);
	h = HASH(h, d->has_max_cpus);
	h = HASH(h, d->max_cpus);
	h = HASH(h, d->cpus_per_task);
	h = HASH(h, d->memory.kind);
	h = HASH(h, d->memory.mb);
	h = HASH(h, d->nice);
	h = HASH(h, d->submit_time);
	h = HASH(h, d->begin_time);
	h = HASH(h, d->accrue_time);
	h = _hash_tres(h, j->tres_requested, j->n_tres_requested);
	h = _hash_tres(h, j->tres_allocated, j->n_tres_allocated);
	h = HASH(h, j->has_billable_tres);
	h = HASH(h, j->billable_tres);
	h = HASH(h, j->has_total_cpus);
	h = HASH(h, j->total_cpus);
	return h;
}

/* ---- associations and QOS ---- */

extern void records_association(arena_t *arena, slurmdb_assoc_rec_t *a,
				swasm_association *out)
{
	slurmdb_assoc_usage_t *u = a->usage;
	swasm_tres_usage *tres_raw;
	size_t k = 0;

	memset(out, 0, sizeof(*out));
	out->id = a->id;
	out->has_parent_id = a->parent_id && (a->parent_id != NO_VAL);
	out->parent_id = a->parent_id;
	out->account = arena_strdup(arena, a->acct);
	out->user = arena_strdup(arena, a->user);
	out->has_user_id = a->user && (a->uid != NO_VAL);
	out->user_id = a->uid;
	out->partition = arena_strdup(arena, a->partition);
	if (a->shares_raw == SLURMDB_FS_USE_PARENT) {
		out->shares = SWASM_SHARES_PARENT;
	} else {
		out->shares = SWASM_SHARES_RAW;
		out->shares_raw = (a->shares_raw == NO_VAL) ? 1 : a->shares_raw;
	}
	out->has_priority = a->priority && (a->priority != INFINITE) &&
			    (a->priority != NO_VAL);
	out->priority = a->priority;
	if (!u)
		return;
	out->usage_raw = (double) u->usage_raw;
	if (u->usage_tres_raw) {
		tres_raw = arena_alloc(arena, slurmctld_tres_cnt * sizeof(*tres_raw));
		for (int i = 0; i < slurmctld_tres_cnt; i++) {
			if (!u->usage_tres_raw[i])
				continue;
			tres_raw[k].name =
				arena_strdup(arena, assoc_mgr_tres_name_array[i]);
			tres_raw[k].usage = (double) u->usage_tres_raw[i];
			k++;
		}
		out->usage_tres_raw = tres_raw;
		out->n_usage_tres_raw = k;
	}
	out->grp_used_tres_run_secs = _tres(arena, u->grp_used_tres_run_secs, true,
					    &out->n_grp_used_tres_run_secs);
}

extern uint64_t records_association_fingerprint(const swasm_association *a)
{
	uint64_t h = IDMAP_FNV_SEED;

	h = HASH(h, a->has_parent_id);
	h = HASH(h, a->parent_id);
	h = idmap_hash_str(h, a->account);
	h = idmap_hash_str(h, a->user);
	h = HASH(h, a->has_user_id);
	h = HASH(h, a->user_id);
	h = idmap_hash_str(h, a->partition);
	h = HASH(h, a->shares);
	h = HASH(h, a->shares_raw);
	h = HASH(h, a->has_priority);
	h = HASH(h, a->priority);
	return h;
}

extern void records_qos(arena_t *arena, slurmdb_qos_rec_t *q, swasm_qos *out)
{
	memset(out, 0, sizeof(*out));
	out->name = arena_strdup(arena, q->name);
	out->id = q->id;
	out->priority = (q->priority == NO_VAL || q->priority == INFINITE) ?
			0 : q->priority;
	out->usage_factor = (q->usage_factor >= 0) ? q->usage_factor : 1.0;
	out->no_decay = q->flags & QOS_FLAG_NO_DECAY;
	if (q->usage)
		out->grp_used_tres_run_secs =
			_tres(arena, q->usage->grp_used_tres_run_secs, true,
			      &out->n_grp_used_tres_run_secs);
}

extern uint64_t records_qos_fingerprint(const swasm_qos *q)
{
	uint64_t h = IDMAP_FNV_SEED;

	h = idmap_hash_str(h, q->name);
	h = HASH(h, q->priority);
	h = HASH(h, q->usage_factor);
	h = HASH(h, q->no_decay);
	return h;
}
