/*
 * idmap.h: a map from a 32-bit id (job, association, QOS) to a 64-bit
 * fingerprint of what the shim last told the plugin about it, with the pass
 * that last saw it, so that only changes cross the boundary and forgotten
 * ids can be swept. Not thread-safe: the caller holds the lock that guards
 * the records (the job write lock for jobs, the shim's own for the rest).
 */
#ifndef SWASM_PRIORITY_IDMAP_H
#define SWASM_PRIORITY_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	uint32_t id;
	uint32_t seen; /* the pass that last saw the id */
	uint64_t fingerprint;
	void *data; /* the caller's, freed by the caller */
} idmap_entry_t;

typedef struct {
	idmap_entry_t *slots; /* id 0 marks an empty slot: ids start at 1 */
	size_t capacity;      /* a power of two, or 0 */
	size_t count;
} idmap_t;

/* The entry of `id`, or NULL. */
extern idmap_entry_t *idmap_find(idmap_t *map, uint32_t id);
/* The entry of `id`, added (zeroed) when missing. */
extern idmap_entry_t *idmap_get(idmap_t *map, uint32_t id);
extern void idmap_remove(idmap_t *map, uint32_t id);
/* Calls `fn` (when not NULL) on each entry not seen in pass `seen`, then
 * removes it. */
extern void idmap_sweep(idmap_t *map, uint32_t seen,
			void (*fn)(idmap_entry_t *entry, void *arg), void *arg);
/* Calls `fn` (when not NULL) on every entry, then empties the map. */
extern void idmap_clear(idmap_t *map, void (*fn)(idmap_entry_t *entry, void *arg),
			void *arg);

/* FNV-1a over `len` bytes, continuing from `h` (start with IDMAP_FNV_SEED). */
#define IDMAP_FNV_SEED 0xcbf29ce484222325ULL
extern uint64_t idmap_hash(uint64_t h, const void *data, size_t len);
/* The same over a string (NULL and "" differ). */
extern uint64_t idmap_hash_str(uint64_t h, const char *s);

#endif
