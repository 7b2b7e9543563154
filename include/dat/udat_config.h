/*
 * dat/udat_config.h - build-time configuration of the uDAT API.
 *
 * The values below are compiled into every consumer: the dat_ia_open()
 * macro passes them to dat_ia_openv(), so a DAT 1.2 program always asks
 * the registry for (major 1, minor 2, not thread safe).
 */
#ifndef _UDAT_CONFIG_H_
#define _UDAT_CONFIG_H_

/* API version implemented by these headers. */
#define DAT_VERSION_MAJOR   1
#define DAT_VERSION_MINOR   2

/*
 * Thread-safety level requested by consumers built with these headers.
 * As in the reference implementation this is "not thread safe".
 * (DAT_FALSE comes from dat.h; the macro is expanded only where used.)
 */
#define DAT_THREADSAFE      DAT_FALSE

#endif /* _UDAT_CONFIG_H_ */
