/*
 * test_policy.c - select/first_fit's policy, natively (`make test`).
 * Expectations: the first candidates by index that are free and fit, the
 * required nodes first, as the Rust and Python first_fit plugins choose.
 * Exits 1 on the first difference, naming it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

static int passed;

/* Compares a choice with its expectation ("0,1", "" for none); exits 1. */
static void expect(const char *what, const uint32_t *got, size_t n,
		   const char *want)
{
	char text[64] = "";

	for (size_t i = 0; i < n; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "%s%u", i ? "," : "", got[i]);
	if (strcmp(text, want)) {
		fprintf(stderr, "FAIL %s: %s, expected %s\n", what, text, want);
		exit(1);
	}
	printf("ok   %s\n", what);
	passed++;
}

int main(void)
{
	/* n0 busy until 100, n1 and n2 free; 4 CPUs, 4000 MB each. */
	struct ff_node nodes[3] = {
		{ 0, 4, 4000, 0, 100 }, { 1, 4, 4000, 0, 0 }, { 2, 4, 4000, 0, 0 },
	};
	struct ff_job job = { .min_nodes = 2, .min_cpus = 1 };
	uint32_t n0 = 0, out[3];
	size_t n;

	n = first_fit(nodes, 3, &job, 0, out);
	expect("two nodes now", out, n, "1,2");
	n = first_fit(nodes, 3, &job, 100, out);
	expect("two nodes at 100", out, n, "0,1");
	job.min_nodes = 4;
	n = first_fit(nodes, 3, &job, 100, out);
	expect("four nodes never", out, n, "");
	job = (struct ff_job){ .min_nodes = 1, .min_cpus = 6 };
	n = first_fit(nodes, 3, &job, 0, out);
	expect("six CPUs: two nodes", out, n, "1,2");
	job.max_nodes = 1;
	n = first_fit(nodes, 3, &job, 0, out);
	expect("six CPUs on one node: none", out, n, "");
	job = (struct ff_job){ .min_nodes = 1, .required = &n0, .n_required = 1 };
	n = first_fit(nodes, 3, &job, 0, out);
	expect("-w n0 now: busy", out, n, "");
	n = first_fit(nodes, 3, &job, 100, out);
	expect("-w n0 at 100", out, n, "0");
	job = (struct ff_job){ .min_nodes = 1, .mem_per_cpu = 1001 };
	n = first_fit(nodes, 3, &job, 0, out);
	expect("--mem-per-cpu 1001 fits no 4-CPU node", out, n, "");
	printf("%d passed, 0 failed\n", passed);
	return 0;
}
