/*
 * idmap.c: open addressing with linear probing and backward-shift deletion
 * (see idmap.h).
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "src/common/xmalloc.h"

#include "idmap.h"

static size_t _slot(const idmap_t *map, uint32_t id)
{
	/* Fibonacci hashing spreads consecutive job ids */
	return (size_t) ((id * 0x9E3779B97F4A7C15ULL) >> 32) &
	       (map->capacity - 1);
}

static void _grow(idmap_t *map)
{
	idmap_entry_t *old = map->slots;
	size_t old_capacity = map->capacity;

	map->capacity = old_capacity ? old_capacity * 2 : 64;
	map->slots = xcalloc(map->capacity, sizeof(idmap_entry_t));
	map->count = 0;
	for (size_t i = 0; i < old_capacity; i++) {
		if (old[i].id)
			*idmap_get(map, old[i].id) = old[i];
	}
	xfree(old);
}

extern idmap_entry_t *idmap_find(idmap_t *map, uint32_t id)
{
	if (!map->capacity || !id)
		return NULL;
	for (size_t i = _slot(map, id);; i = (i + 1) & (map->capacity - 1)) {
		if (map->slots[i].id == id)
			return &map->slots[i];
		if (!map->slots[i].id)
			return NULL;
	}
}

extern idmap_entry_t *idmap_get(idmap_t *map, uint32_t id)
{
	idmap_entry_t *e = idmap_find(map, id);
	size_t i;

	if (e)
		return e;
	if ((map->count + 1) * 10 > map->capacity * 7)
		_grow(map);
	for (i = _slot(map, id); map->slots[i].id;
	     i = (i + 1) & (map->capacity - 1))
		;
	memset(&map->slots[i], 0, sizeof(map->slots[i]));
	map->slots[i].id = id;
	map->count++;
	return &map->slots[i];
}

extern void idmap_remove(idmap_t *map, uint32_t id)
{
	idmap_entry_t *e = idmap_find(map, id);
	size_t mask = map->capacity - 1, hole, i;

	if (!e)
		return;
	hole = e - map->slots;
	map->slots[hole].id = 0;
	map->count--;
	/* shift back the entries of the run after the hole that may move */
	for (i = (hole + 1) & mask; map->slots[i].id; i = (i + 1) & mask) {
		size_t home = _slot(map, map->slots[i].id);
		bool movable = (hole <= i) ? (home <= hole || home > i)
					   : (home <= hole && home > i);
		if (movable) {
			map->slots[hole] = map->slots[i];
			map->slots[i].id = 0;
			hole = i;
		}
	}
}

extern void idmap_sweep(idmap_t *map, uint32_t seen,
			void (*fn)(idmap_entry_t *entry, void *arg), void *arg)
{
	size_t i = 0;

	while (i < map->capacity) {
		uint32_t id = map->slots[i].id;
		if (id && map->slots[i].seen != seen) {
			if (fn)
				fn(&map->slots[i], arg);
			idmap_remove(map, id);
			/* an entry may have moved into slot i: look again */
			continue;
		}
		i++;
	}
}

extern void idmap_clear(idmap_t *map, void (*fn)(idmap_entry_t *entry, void *arg),
			void *arg)
{
	for (size_t i = 0; fn && (i < map->capacity); i++) {
		if (map->slots[i].id)
			fn(&map->slots[i], arg);
	}
	xfree(map->slots);
	map->capacity = 0;
	map->count = 0;
}

extern uint64_t idmap_hash(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

extern uint64_t idmap_hash_str(uint64_t h, const char *s)
{
	if (!s)
		return idmap_hash(h, "\xff", 1);
	return idmap_hash(h, s, strlen(s) + 1);
}
