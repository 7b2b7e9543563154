/*
 * dat/dat_registry.h - provider side of the DAT 1.2 registry.
 *
 * Included only by provider libraries (and by libdat itself), never by
 * consumers.  A provider library is loaded by libdat from the lib_path of a
 * dat.conf entry and must export DAT_PROVIDER_INIT_FUNC_NAME and
 * DAT_PROVIDER_FINI_FUNC_NAME.  Its init function fills a DAT_PROVIDER
 * table and hands it to dat_registry_add_provider().
 *
 * Every object handle a provider gives out must point at memory whose first
 * word is the DAT_PROVIDER * of that provider (see DAT_HANDLE_TO_PROVIDER).
 * The table, its slot types and the DAT_<CALL> dispatch macros come from
 * <dat/udat_redirection.h> and <dat/dat_redirection.h>, included here.
 */
#ifndef _DAT_REGISTRY_H_
#define _DAT_REGISTRY_H_

#include <dat/udat.h>
#include <dat/udat_redirection.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Registration (exported by libdat)                                   */
/* ------------------------------------------------------------------ */

/* Solaris declares the first parameter without const. */
DAT_EXPORT DAT_RETURN dat_registry_add_provider(
    const DAT_PROVIDER *provider,
    const DAT_PROVIDER_INFO *provider_info);

DAT_EXPORT DAT_RETURN dat_registry_remove_provider(
    const DAT_PROVIDER *provider,
    const DAT_PROVIDER_INFO *provider_info);
/* ------------------------------------------------------------------ */
/* Provider library entry points (looked up by name with dlsym)        */
/* ------------------------------------------------------------------ */

typedef void (*DAT_PROVIDER_INIT_FUNC)(
    const DAT_PROVIDER_INFO *,
    const char *);              /* instance data: ia_params of dat.conf */

typedef void (*DAT_PROVIDER_FINI_FUNC)(
    const DAT_PROVIDER_INFO *);

#define DAT_PROVIDER_INIT_FUNC_NAME     dat_provider_init
#define DAT_PROVIDER_FINI_FUNC_NAME     dat_provider_fini

#define DAT_PROVIDER_INIT_FUNC_STR      "dat_provider_init"
#define DAT_PROVIDER_FINI_FUNC_STR      "dat_provider_fini"

/* Defined by each provider library. */
extern void DAT_PROVIDER_INIT_FUNC_NAME(
    const DAT_PROVIDER_INFO *provider_info,
    const char *instance_data);

extern void DAT_PROVIDER_FINI_FUNC_NAME(
    const DAT_PROVIDER_INFO *provider_info);

#ifdef __cplusplus
}
#endif

#endif /* _DAT_REGISTRY_H_ */
