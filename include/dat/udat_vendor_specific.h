/*
 * dat/udat_vendor_specific.h - place for vendor additions to the uDAT API.
 *
 * This implementation defines no vendor-specific extensions; it only pulls
 * in the transport-independent vendor header.
 */
#ifndef UDAT_VENDOR_SPECIFIC_H
#define UDAT_VENDOR_SPECIFIC_H

#include <dat/dat_vendor_specific.h>

#endif /* UDAT_VENDOR_SPECIFIC_H */
