/*
 * swasm_records.c: the translations every shim shares (see swasm_records.h).
 */
#include <stddef.h>
#include <string.h>

#include "config.h"
#include "src/common/list.h"
#include "src/common/read_config.h"
#include "src/common/slurm_protocol_defs.h"
#include "src/common/slurm_selecttype_info.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "swasm_records.h"

/* ---- arena ---- */

struct arena_chunk {
	arena_chunk_t *next;
	size_t used, size;
	max_align_t data[];
};

extern void *arena_alloc(arena_t *arena, size_t size)
{
	arena_chunk_t *c = arena->head;
	void *p;

	size = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (!size)
		size = sizeof(max_align_t);
	if (!c || (c->used + size > c->size)) {
		size_t want = size > 65536 ? size : 65536;
		c = xmalloc(sizeof(arena_chunk_t) + want);
		c->size = want;
		c->next = arena->head;
		arena->head = c;
	}
	p = (char *) c->data + c->used;
	c->used += size;
	memset(p, 0, size);
	return p;
}

extern char *arena_strdup(arena_t *arena, const char *s)
{
	size_t n;
	char *p;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	p = arena_alloc(arena, n);
	memcpy(p, s, n);
	return p;
}

extern void arena_free(arena_t *arena)
{
	while (arena->head) {
		arena_chunk_t *next = arena->head->next;
		xfree(arena->head);
		arena->head = next;
	}
}

/* ---- values ---- */

extern swasm_bitmap swasm_records_bitmap(bitstr_t *b)
{
	swasm_bitmap out = { 0 };

	if (b) {
		out.len = bit_size(b);
		out.words = (const uint64_t *) (b + BITSTR_OVERHEAD);
	}
	return out;
}

extern swasm_bitmap swasm_records_bitmap_slice(arena_t *arena, bitstr_t *b,
					       int start, int len)
{
	swasm_bitmap out = { 0 };
	uint64_t *words;

	if (len <= 0)
		return out;
	words = arena_alloc(arena, ((len + 63) / 64) * sizeof(uint64_t));
	for (int i = 0; i < len; i++) {
		if (b && (start + i < bit_size(b)) && bit_test(b, start + i))
			words[i / 64] |= UINT64_C(1) << (i % 64);
	}
	out.len = len;
	out.words = words;
	return out;
}

extern swasm_memory_request swasm_records_memory(uint64_t mb)
{
	swasm_memory_request m = { .kind = SWASM_MEMORY_NONE };

	if ((mb == NO_VAL64) || (mb == 0))
		return m;
	if (mb & MEM_PER_CPU) {
		m.kind = SWASM_MEMORY_PER_CPU;
		m.mb = mb & ~MEM_PER_CPU;
	} else {
		m.kind = SWASM_MEMORY_PER_NODE;
		m.mb = mb;
	}
	return m;
}

extern const char *const *swasm_records_tokens(arena_t *arena, const char *text,
					       size_t *n)
{
	char *copy, *tok, *save = NULL;
	const char **out;
	size_t count = 0, i = 0;

	*n = 0;
	if (!text || !text[0])
		return NULL;
	for (const char *p = text; *p; p++)
		count += (*p == ',');
	out = arena_alloc(arena, (count + 1) * sizeof(char *));
	copy = arena_strdup(arena, text);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		out[i++] = tok;
	*n = i;
	return out;
}

/* ---- the cluster ---- */

extern swasm_key_value *swasm_records_cluster(arena_t *arena,
					      swasm_cluster_config *c,
					      size_t extra)
{
	List pairs = slurm_ctl_conf_2_key_pairs(&slurm_conf);
	size_t n_pairs = pairs ? list_count(pairs) : 0, k = 0;
	config_key_pair_t *pair;
	swasm_key_value *raw;
	ListIterator itr;

	memset(c, 0, sizeof(*c));
	c->cluster_name = arena_strdup(arena, slurm_conf.cluster_name);
	/* the SWASM_CR_* bits are slurm.h's CR_* values */
	c->select_type_parameters = slurm_conf.select_type_param;
	c->default_memory = swasm_records_memory(slurm_conf.def_mem_per_cpu);
	c->scheduler_parameters = swasm_records_tokens(
		arena, slurm_conf.sched_params, &c->n_scheduler_parameters);
	/* the SWASM_PREEMPT_MODE_* bits are slurm.h's PREEMPT_MODE_* values */
	c->preempt_mode = slurm_conf.preempt_mode;
	c->over_time_limit = slurm_conf.over_time_limit;
	c->kill_wait = slurm_conf.kill_wait;
	/* the SWASM_TASK_PARAM_* bits are slurm.h's CPU_BIND_* values */
	c->task_plugin_param = slurm_conf.task_plugin_param;
	c->gres_types = swasm_records_tokens(arena, slurm_conf.gres_plugins,
					     &c->n_gres_types);

	raw = arena_alloc(arena, (n_pairs + extra + 1) * sizeof(*raw));
	if (pairs) {
		itr = list_iterator_create(pairs);
		while ((pair = list_next(itr))) {
			raw[k].key = arena_strdup(arena, pair->name);
			raw[k].value = arena_strdup(arena,
						    pair->value ? pair->value : "");
			k++;
		}
		list_iterator_destroy(itr);
		FREE_NULL_LIST(pairs);
	}
	c->raw = raw;
	c->n_raw = k;
	return raw;
}
