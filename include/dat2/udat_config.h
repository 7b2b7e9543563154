/*
 * dat2/udat_config.h - build-time configuration of the uDAT 2.0 API.
 *
 * The values below are compiled into every consumer: the dat_ia_open()
 * macro passes them to dat_ia_openv(), so a DAT 2.0 program always asks
 * the registry for (major 2, minor 0, not thread safe).
 */
#ifndef _UDAT_CONFIG_H_
#define _UDAT_CONFIG_H_

/* API version implemented by these headers. */
#define DAT_VERSION_MAJOR   2
#define DAT_VERSION_MINOR   0

/*
 * Thread-safety level requested by consumers built with these headers.
 * As in the reference implementation this is "not thread safe".
 * (DAT_FALSE comes from dat.h; the macro is expanded only where used.)
 */
#define DAT_THREADSAFE      DAT_FALSE

/*
 * The extension interface (dat_extension_op, DAT_*_EXTENSION_BASE values,
 * <dat2/dat_ib_extensions.h>) is on unless the build defines
 * DAT_EXTENSIONS itself.
 */
#ifndef DAT_EXTENSIONS
#define DAT_EXTENSIONS      1
#endif

#endif /* _UDAT_CONFIG_H_ */
