/*
 * factors.c: the plugin's sprio rows, kept per job (see factors.h).
 */
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "src/common/assoc_mgr.h"
#include "src/common/slurm_mcs.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "factors.h"
#include "idmap.h"
#include "records.h"
#include "usage.h"

typedef struct {
	char *partition;
	bool direct;
	uint32_t direct_priority;
	double age, assoc, fs, js, part, qos;
	double *tres; /* weighted, by TRES index; NULL without TRES weights */
	int64_t site;
	int32_t nice;
	uint32_t priority;
} row_t;

typedef struct {
	int n;
	row_t *rows;
} job_rows_t;

static pthread_mutex_t rows_lock = PTHREAD_MUTEX_INITIALIZER;
static idmap_t rows_by_job;

static void _free_rows(idmap_entry_t *e, void *arg)
{
	job_rows_t *jr = e->data;

	if (!jr)
		return;
	for (int i = 0; i < jr->n; i++) {
		xfree(jr->rows[i].partition);
		xfree(jr->rows[i].tres);
	}
	xfree(jr->rows);
	xfree(jr);
	e->data = NULL;
}

static void _copy_row(const swasm_priority_factors *f, row_t *r)
{
	r->partition = xstrdup(f->partition);
	r->direct = f->has_direct_priority;
	r->direct_priority = f->direct_priority;
	r->age = f->age;
	r->assoc = f->association;
	r->fs = f->fair_share;
	r->js = f->job_size;
	r->part = f->partition_factor;
	r->qos = f->qos_factor;
	r->site = f->site;
	r->nice = f->nice;
	r->priority = f->priority;
	if (usage_tres_weights() && slurmctld_tres_cnt) {
		r->tres = xcalloc(slurmctld_tres_cnt, sizeof(double));
		for (size_t i = 0; i < f->n_tres; i++) {
			int index = records_tres_index(f->tres[i].name);
			if (index >= 0)
				r->tres[index] = f->tres[i].value;
		}
	}
}

/* Adds the rows of `list` to `map`, grouped by job (caller holds rows_lock
 * or owns `map`). */
static void _add_rows(idmap_t *map, const swasm_priority_factors_list *list)
{
	for (size_t i = 0; i < list->n_items; i++) {
		const swasm_priority_factors *f = &list->items[i];
		idmap_entry_t *e = idmap_get(map, f->job_id);
		job_rows_t *jr = e->data;

		if (!jr)
			e->data = jr = xmalloc(sizeof(*jr));
		xrecalloc(jr->rows, jr->n + 1, sizeof(row_t));
		_copy_row(f, &jr->rows[jr->n++]);
	}
}

extern void factors_replace_all(const swasm_priority_factors_list *list)
{
	idmap_t fresh = { 0 }, old;

	_add_rows(&fresh, list);
	slurm_mutex_lock(&rows_lock);
	old = rows_by_job;
	rows_by_job = fresh;
	slurm_mutex_unlock(&rows_lock);
	idmap_clear(&old, _free_rows, NULL);
}

extern void factors_replace_job(uint32_t job_id,
				const swasm_priority_factors_list *list)
{
	idmap_entry_t *e;

	slurm_mutex_lock(&rows_lock);
	if ((e = idmap_find(&rows_by_job, job_id))) {
		_free_rows(e, NULL);
		idmap_remove(&rows_by_job, job_id);
	}
	_add_rows(&rows_by_job, list);
	slurm_mutex_unlock(&rows_lock);
}

static const row_t *_row(const job_rows_t *jr, const char *partition)
{
	for (int i = 0; jr && (i < jr->n); i++) {
		if (!xstrcmp(jr->rows[i].partition, partition))
			return &jr->rows[i];
	}
	return NULL;
}

/* job_ptr->prio_factors as multifactor leaves it: the weighted factors of
 * the job's partition (caller holds rows_lock). */
static void _set_prio_factors(job_record_t *job_ptr, const row_t *r)
{
	priority_factors_object_t *f = job_ptr->prio_factors;
	const double *weights = usage_tres_weights();

	if (!f) {
		f = job_ptr->prio_factors = xmalloc(sizeof(*f));
	} else {
		xfree(f->tres_weights);
		xfree(f->priority_tres);
		memset(f, 0, sizeof(*f));
	}
	if (r->direct)
		return;
	f->priority_age = r->age;
	f->priority_assoc = r->assoc;
	f->priority_fs = r->fs;
	f->priority_js = r->js;
	f->priority_part = r->part;
	f->priority_qos = r->qos;
	f->priority_site = (uint32_t) (r->site + NICE_OFFSET);
	f->nice = (uint32_t) ((int64_t) r->nice + NICE_OFFSET);
	if (r->tres && weights) {
		f->tres_cnt = slurmctld_tres_cnt;
		f->priority_tres = xcalloc(slurmctld_tres_cnt, sizeof(double));
		memcpy(f->priority_tres, r->tres, slurmctld_tres_cnt * sizeof(double));
		f->tres_weights = xcalloc(slurmctld_tres_cnt, sizeof(double));
		memcpy(f->tres_weights, weights, slurmctld_tres_cnt * sizeof(double));
	}
}

extern void factors_apply(job_record_t *job_ptr)
{
	part_record_t *part_ptr;
	ListIterator itr;
	idmap_entry_t *e;
	const row_t *r;
	int i = 0;

	slurm_mutex_lock(&rows_lock);
	e = idmap_find(&rows_by_job, job_ptr->job_id);
	if (!e || !e->data) {
		slurm_mutex_unlock(&rows_lock);
		return;
	}
	if (job_ptr->part_ptr && (r = _row(e->data, job_ptr->part_ptr->name)))
		_set_prio_factors(job_ptr, r);
	if (!job_ptr->part_ptr_list) {
		slurm_mutex_unlock(&rows_lock);
		return;
	}
	if (!job_ptr->priority_array)
		job_ptr->priority_array =
			xcalloc(list_count(job_ptr->part_ptr_list) + 1,
				sizeof(uint32_t));
	list_sort(job_ptr->part_ptr_list, priority_sort_part_tier);
	itr = list_iterator_create(job_ptr->part_ptr_list);
	while ((part_ptr = list_next(itr))) {
		if ((r = _row(e->data, part_ptr->name)))
			job_ptr->priority_array[i] = r->priority;
		i++;
	}
	list_iterator_destroy(itr);
	slurm_mutex_unlock(&rows_lock);
}

static priority_factors_object_t *_object(job_record_t *job_ptr,
					  part_record_t *part_ptr, const row_t *r)
{
	priority_factors_object_t *obj = xmalloc(sizeof(*obj));
	const double *weights = usage_tres_weights();

	obj->job_id = job_ptr->job_id;
	obj->user_id = job_ptr->user_id;
	obj->partition = part_ptr->name;
	if (r->direct) {
		/* as multifactor: the explicit priority and nothing else */
		obj->direct_prio = r->direct_priority;
		return obj;
	}
	obj->nice = (uint32_t) ((int64_t) r->nice + NICE_OFFSET);
	obj->priority_age = r->age;
	obj->priority_assoc = r->assoc;
	obj->priority_fs = r->fs;
	obj->priority_js = r->js;
	obj->priority_part = r->part;
	obj->priority_qos = r->qos;
	obj->priority_site = (uint32_t) (r->site + NICE_OFFSET);
	if (r->tres && weights) {
		obj->tres_cnt = slurmctld_tres_cnt;
		obj->priority_tres = xcalloc(slurmctld_tres_cnt, sizeof(double));
		memcpy(obj->priority_tres, r->tres,
		       slurmctld_tres_cnt * sizeof(double));
		obj->tres_weights = xcalloc(slurmctld_tres_cnt, sizeof(double));
		memcpy(obj->tres_weights, weights,
		       slurmctld_tres_cnt * sizeof(double));
	}
	return obj;
}

static int _same_ptr(void *x, void *key)
{
	return x == key;
}

static bool _in_list(List l, void *item)
{
	return !l || list_find_first(l, _same_ptr, item);
}

static bool _listed_id(List l, uint32_t id)
{
	ListIterator itr;
	uint32_t *p;
	bool found = false;

	if (!l)
		return true;
	itr = list_iterator_create(l);
	while ((p = list_next(itr))) {
		if (*p == id) {
			found = true;
			break;
		}
	}
	list_iterator_destroy(itr);
	return found;
}

/* Whether `uid` may see the job (PrivateData=jobs), as multifactor checks. */
static bool _visible(job_record_t *job_ptr, uid_t uid)
{
	if (!(slurm_conf.private_data & PRIVATE_DATA_JOBS) ||
	    (job_ptr->user_id == uid) || validate_operator(uid))
		return true;
	if (slurm_mcs_get_privatedata() == 0)
		return assoc_mgr_is_user_acct_coord(acct_db_conn, uid,
						    job_ptr->account);
	return mcs_g_check_mcs_label(uid, job_ptr->mcs_label, false) == 0;
}

extern List factors_list(priority_factors_request_msg_t *req_msg, uid_t uid)
{
	slurmctld_lock_t job_read_lock =
		{ NO_LOCK, READ_LOCK, READ_LOCK, READ_LOCK, NO_LOCK };
	uint16_t flags = slurm_conf.priority_flags;
	time_t now = time(NULL);
	List ret_list = NULL, part_filter = NULL;
	job_record_t *job_ptr;
	ListIterator itr;

	lock_slurmctld(job_read_lock);
	if (req_msg->partitions) {
		char *copy = xstrdup(req_msg->partitions), *save = NULL, *tok;
		part_filter = list_create(NULL);
		for (tok = strtok_r(copy, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			part_record_t *p = find_part_record(tok);
			if (p)
				list_append(part_filter, p);
		}
		xfree(copy);
	}
	if (!job_list || !list_count(job_list))
		goto done;

	ret_list = list_create(slurm_destroy_priority_factors_object);
	slurm_mutex_lock(&rows_lock);
	itr = list_iterator_create(job_list);
	while ((job_ptr = list_next(itr))) {
		time_t use_time;
		idmap_entry_t *e;

		if (!(flags & PRIORITY_FLAGS_CALCULATE_RUNNING) &&
		    !IS_JOB_PENDING(job_ptr))
			continue;
		if (IS_JOB_REVOKED(job_ptr) || !job_ptr->details)
			continue;
		use_time = (flags & PRIORITY_FLAGS_ACCRUE_ALWAYS) ?
			   job_ptr->details->submit_time :
			   job_ptr->details->begin_time;
		if (!use_time || (use_time > now) || (job_ptr->priority == 0))
			continue;
		if (!_visible(job_ptr, uid) ||
		    !_listed_id(req_msg->job_id_list, job_ptr->job_id) ||
		    !_listed_id(req_msg->uid_list, job_ptr->user_id))
			continue;
		if (!(e = idmap_find(&rows_by_job, job_ptr->job_id)) || !e->data)
			continue;
		if (job_ptr->part_ptr_list) {
			part_record_t *p;
			ListIterator pitr =
				list_iterator_create(job_ptr->part_ptr_list);
			while ((p = list_next(pitr))) {
				const row_t *r = _row(e->data, p->name);
				if (r && _in_list(part_filter, p))
					list_append(ret_list,
						    _object(job_ptr, p, r));
			}
			list_iterator_destroy(pitr);
		} else if (job_ptr->part_ptr &&
			   _in_list(part_filter, job_ptr->part_ptr)) {
			const row_t *r = _row(e->data, job_ptr->part_ptr->name);
			if (r)
				list_append(ret_list,
					    _object(job_ptr, job_ptr->part_ptr, r));
		}
	}
	list_iterator_destroy(itr);
	slurm_mutex_unlock(&rows_lock);
	if (!list_count(ret_list))
		FREE_NULL_LIST(ret_list);
done:
	unlock_slurmctld(job_read_lock);
	FREE_NULL_LIST(part_filter);
	return ret_list;
}

extern void factors_fini(void)
{
	slurm_mutex_lock(&rows_lock);
	idmap_clear(&rows_by_job, _free_rows, NULL);
	slurm_mutex_unlock(&rows_lock);
}
