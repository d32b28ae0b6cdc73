/*
 * swasm_shim.c: loading libslurm_wasm.so into a Slurm daemon (see
 * swasm_shim.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "swasm_shim.h"

static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;
static swasm_api_t api;
static bool api_loaded;

/* The directory holding the object that defines `self`, or NULL. */
static char *_dir_of(const void *self)
{
	Dl_info info;
	char *copy, *dir;

	if (!dladdr(self, &info) || !info.dli_fname)
		return NULL;
	copy = xstrdup(info.dli_fname);
	dir = xstrdup(dirname(copy));
	xfree(copy);
	return dir;
}

static char *_library_path(const void *self)
{
	const char *env = getenv("SLURM_WASM_LIBRARY");
	char *dir, *path;

	if (env && env[0])
		return xstrdup(env);
	if (!(dir = _dir_of(self)))
		return xstrdup("lib/libslurm_wasm.so");
	path = xstrdup_printf("%s/lib/libslurm_wasm.so", dir);
	xfree(dir);
	return path;
}

extern const swasm_api_t *swasm_shim_api(const char *shim, const void *self)
{
	const swasm_api_t *out = NULL;
	char *path = NULL;
	void *handle;
	uint32_t version;

	slurm_mutex_lock(&api_lock);
	if (api_loaded) {
		out = &api;
		goto done;
	}
	path = _library_path(self);
	handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!handle) {
		error("%s: cannot load the slurm-wasm library %s: %s (install it beside the plugin, in lib/, or set SLURM_WASM_LIBRARY in the daemon's environment)",
		      shim, path, dlerror());
		goto done;
	}
#define SWASM_SHIM_RESOLVE(f)                                                  \
	if (!(api.f = (__typeof__(&f))dlsym(handle, #f))) {                    \
		error("%s: the slurm-wasm library %s has no function %s: it is not the library this plugin was built for (rebuild both from one source tree)", \
		      shim, path, #f);                                        \
		goto done;                                                     \
	}
	SWASM_SHIM_FUNCS(SWASM_SHIM_RESOLVE)
#undef SWASM_SHIM_RESOLVE
	version = api.swasm_abi_version();
	if (version != SWASM_ABI_VERSION) {
		error("%s: the slurm-wasm library %s speaks C ABI version %u, this plugin was built for version %u (rebuild both from one source tree)",
		      shim, path, version, (unsigned) SWASM_ABI_VERSION);
		goto done;
	}
	api_loaded = true;
	out = &api;
	verbose("%s: loaded %s (C ABI %u, contract %s)", shim, path, version,
		api.swasm_contract_version());
done:
	slurm_mutex_unlock(&api_lock);
	xfree(path);
	return out;
}

extern char *swasm_shim_config_path(const char *slurm_conf_path)
{
	const char *env = getenv("SLURM_WASM_CONFIG");
	char *copy, *path;

	if (env && env[0])
		return xstrdup(env);
	if (!slurm_conf_path || !slurm_conf_path[0])
		slurm_conf_path = default_slurm_config_file;
	copy = xstrdup(slurm_conf_path);
	path = xstrdup_printf("%s/slurm-wasm.toml", dirname(copy));
	xfree(copy);
	return path;
}

/* The most detailed library level the daemon's log would print. */
static swasm_log_level _max_level(void)
{
	log_level_t level = get_log_level();

	if (level >= LOG_LEVEL_DEBUG2)
		return SWASM_LOG_TRACE;
	if (level >= LOG_LEVEL_DEBUG)
		return SWASM_LOG_DEBUG;
	if (level >= LOG_LEVEL_VERBOSE)
		return SWASM_LOG_INFO;
	if (level >= LOG_LEVEL_INFO)
		return SWASM_LOG_WARN;
	return SWASM_LOG_ERROR;
}

/* The capture of this thread (swasm_shim_capture). */
static __thread swasm_shim_capture_fn capture_fn;
static __thread void *capture_arg;

extern void swasm_shim_capture(swasm_shim_capture_fn fn, void *arg)
{
	capture_fn = fn;
	capture_arg = arg;
}

/* A plugin's own line without the library's "slurm-wasm: <kind>/<name>: "
 * prefix; NULL for the library's lines (named after a capability or
 * nothing, never a plugin type). */
static const char *_plugin_text(const char *message)
{
	const char *p = message, *end;

	if (strncmp(p, "slurm-wasm: ", 12))
		return NULL;
	p += 12;
	if (!(end = strstr(p, ": ")) || !memchr(p, '/', end - p) ||
	    memchr(p, ' ', end - p))
		return NULL;
	return end + 2;
}

extern void swasm_shim_log(void *ctx, swasm_log_level level, const char *message)
{
	const char *shim = ctx ? ctx : "slurm-wasm";

	if (capture_fn && (level == SWASM_LOG_INFO)) {
		const char *text = _plugin_text(message);
		if (text)
			capture_fn(text, capture_arg);
	}

	switch (level) {
	case SWASM_LOG_ERROR:
		error("%s: %s", shim, message);
		break;
	case SWASM_LOG_WARN:
		info("%s: warning: %s", shim, message);
		break;
	case SWASM_LOG_INFO:
		verbose("%s: %s", shim, message);
		break;
	case SWASM_LOG_DEBUG:
		debug("%s: %s", shim, message);
		break;
	default:
		debug2("%s: %s", shim, message);
		break;
	}
}

extern swasm_host *swasm_shim_open_host(const char *shim, const swasm_api_t *api,
					const char *slurm_conf_path)
{
	swasm_error err = SWASM_ERROR_INIT;
	char *path = swasm_shim_config_path(slurm_conf_path);
	swasm_host *host;

	/* at least INFO, for swasm_shim_capture; Slurm's log functions
	 * drop what the daemon's level does not print */
	host = api->swasm_host_open(path, 0, MAX(_max_level(), SWASM_LOG_INFO),
				    swasm_shim_log,
				    (void *) shim, &err);
	if (!host)
		error("%s: cannot open the host configuration %s: %s", shim,
		      path, err.message ? err.message : "unknown error");
	else
		verbose("%s: host configuration %s", shim, path);
	api->swasm_error_clear(&err);
	xfree(path);
	return host;
}
