/*
 * swasm_records.h: what every shim translates the same way from Slurm's
 * records into the C ABI's structs (slurm_wasm.h): an arena for the arrays
 * a translation allocates, bitmaps, memory requests, comma lists, and the
 * cluster-wide settings of slurm_conf every plugin's init() receives.
 *
 * What a translation points to: strings and bitmaps of the Slurm record
 * itself (valid while the caller holds what guards it), and arrays in an
 * arena that the caller frees after the library call (the library copies
 * what it needs during the call).
 */
#ifndef SWASM_RECORDS_H
#define SWASM_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "src/common/bitstring.h"

#include "slurm_wasm.h"

/* A bump allocator: every block is zeroed; all are freed at once. */
typedef struct arena_chunk arena_chunk_t;
typedef struct {
	arena_chunk_t *head;
} arena_t;

extern void *arena_alloc(arena_t *arena, size_t size);
extern char *arena_strdup(arena_t *arena, const char *s);
extern void arena_free(arena_t *arena);

/* A Slurm bitmap as the ABI's bitmap: its own words, no copy (NULL: empty). */
extern swasm_bitmap swasm_records_bitmap(bitstr_t *b);

/* A bitmap of `len` bits in the arena, its bits copied from `b` starting at
 * bit `start` (a node's slice of a credential's core bitmap). */
extern swasm_bitmap swasm_records_bitmap_slice(arena_t *arena, bitstr_t *b,
					       int start, int len);

/* A memory request as Slurm encodes it (MEM_PER_CPU flag, NO_VAL64, 0). */
extern swasm_memory_request swasm_records_memory(uint64_t mb);

/* `text` split at commas into arena strings; NULL and *n = 0 when empty. */
extern const char *const *swasm_records_tokens(arena_t *arena, const char *text,
					       size_t *n);

/*
 * The cluster-wide settings of slurm_conf: name, SelectTypeParameters and
 * TaskPluginParam in slurm.conf's words, DefMemPerCPU/Node,
 * SchedulerParameters, PreemptMode, OverTimeLimit, KillWait, GresTypes, and
 * every option as `scontrol show config` names it in `raw`. The raw array
 * has room for `extra` more entries after c->n_raw, for a caller's own keys
 * (returned, so that it can fill them and raise c->n_raw).
 */
extern swasm_key_value *swasm_records_cluster(arena_t *arena,
					      swasm_cluster_config *c,
					      size_t extra);

#endif
