/*
 * What the C test programs of libslurm_wasm share: failing with the
 * library's error, paths in the test's directory, printing a return code,
 * and fixtures::job(id) as a C record. Functions are `static inline` so a
 * program that leaves one unused still builds with -Wall -Werror.
 */
#ifndef SWASM_TEST_COMMON_H
#define SWASM_TEST_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm_wasm.h"

/* The directory the driving Rust test gives as argv[1]. */
static const char *dir;

static inline void die(const char *what, const swasm_error *err)
{
	fprintf(stderr, "FAIL: %s: %d %s\n", what, err ? err->code : 0,
		err && err->message ? err->message : "(no message)");
	fflush(stdout);
	exit(1);
}

static inline void check(int rc, const char *what, const swasm_error *err)
{
	if (rc != SWASM_SUCCESS)
		die(what, err);
}

static inline char *path_of(const char *file)
{
	static char buf[8][4096];
	static int next;
	char *p = buf[next++ % 8];
	snprintf(p, 4096, "%s/%s", dir, file);
	return p;
}

static inline void print_rc(const char *key, int rc, const swasm_error *err)
{
	printf("%s %d\n", key, rc == SWASM_SUCCESS ? 0 : err->code);
}

static const uint32_t partition_zero[] = { 0 };

/* fixtures::job(id) */
static inline swasm_job job(uint32_t id, const char *name)
{
	swasm_job j = {
		.job_id = id,
		.name = name,
		.user_id = 1000,
		.group_id = 1000,
		.partitions = partition_zero,
		.n_partitions = 1,
		.state = SWASM_JOB_PENDING,
		.details = {
			.min_nodes = 1,
			.num_tasks = 1,
			.min_cpus = 1,
			.cpus_per_task = 1,
			.pn_min_cpus = 1,
			.memory = { .kind = SWASM_MEMORY_NONE },
			.share = SWASM_SHARE_PARTITION_DEFAULT,
		},
	};
	return j;
}

#endif
