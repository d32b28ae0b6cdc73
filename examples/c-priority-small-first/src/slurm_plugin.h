/*
 * slurm_plugin.h - helpers for a slurm-wasm plugin written in C.
 *
 * The contract's C bindings come from wit-bindgen's C generator
 * (build/gen/<kind>_plugin.h, made by `make`); include that header first.
 * These helpers fill the records every kind shares (the plugin's identity,
 * a plugin error), whose types are named the same in every world.
 *
 * Memory follows the bindings' rules: a function the host calls owns its
 * arguments (free them with the bindings' *_free functions), and what it
 * returns through `ret` or `err` must be allocated with malloc, since the
 * bindings free it once the host has read it.
 */
#ifndef SLURM_WASM_PLUGIN_H
#define SLURM_WASM_PLUGIN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slurm's generic failure and the errno values plugins answer with. */
#define SLURM_ERROR (-1)
#ifndef EINVAL
#define EINVAL 22
#endif

/* The `slurm:plugin` contract version of the wit/ files beside this one. */
#define SLURM_PLUGIN_CONTRACT_VERSION "0.1.0"

/*
 * Slurm's version number rule, (major << 16) | (minor << 8) | micro, of the
 * release whose plugin API the contract follows (22.05.8).
 */
#define SLURM_PLUGIN_VERSION ((22 << 16) | (5 << 8) | 8)

/*
 * Sets *ptr and *len to a malloc'd copy of the C string s (the layout of
 * every world's string type). Aborts when memory runs out: the host sees a
 * trap, and stops calling the plugin.
 */
static inline void slurm_plugin_string(uint8_t **ptr, size_t *len, const char *s)
{
	size_t n = strlen(s);

	*ptr = n ? malloc(n) : NULL;
	if (n && !*ptr)
		abort();
	if (n)
		memcpy(*ptr, s, n);
	*len = n;
}

/*
 * Fills *ret, the answer of describe(): type and name as given, Slurm
 * 22.05.8's plugin version, this contract's version, no plugin id, and the
 * ncaps capabilities of caps (SLURM_PLUGIN_TYPES_CAPABILITY_* values) that
 * the host must grant or refuse to load the plugin. Never fails (aborts
 * when memory runs out).
 */
static inline void slurm_plugin_identity(slurm_plugin_types_plugin_identity_t *ret,
					 const char *type, const char *name,
					 const slurm_plugin_types_capability_t *caps,
					 size_t ncaps)
{
	memset(ret, 0, sizeof(*ret));
	slurm_plugin_string(&ret->plugin_type.ptr, &ret->plugin_type.len, type);
	slurm_plugin_string(&ret->plugin_name.ptr, &ret->plugin_name.len, name);
	ret->plugin_version = SLURM_PLUGIN_VERSION;
	ret->plugin_id.is_some = false;
	slurm_plugin_string(&ret->contract_version.ptr,
			    &ret->contract_version.len,
			    SLURM_PLUGIN_CONTRACT_VERSION);
	ret->required_capabilities.len = ncaps;
	ret->required_capabilities.ptr = NULL;
	if (ncaps) {
		ret->required_capabilities.ptr = malloc(ncaps * sizeof(*caps));
		if (!ret->required_capabilities.ptr)
			abort();
		memcpy(ret->required_capabilities.ptr, caps,
		       ncaps * sizeof(*caps));
	}
}

/*
 * Fills *err with code and the printf-style message, and returns false: a
 * contract function ends with `return slurm_plugin_fail(err, ...)`. The
 * message is cut at 255 bytes.
 */
static inline bool slurm_plugin_fail(slurm_plugin_types_plugin_error_t *err,
				     int32_t code, const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	err->code = code;
	slurm_plugin_string(&err->message.ptr, &err->message.len, text);
	return false;
}

#endif /* SLURM_WASM_PLUGIN_H */
