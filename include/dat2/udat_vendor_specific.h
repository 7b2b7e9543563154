/*
 * dat2/udat_vendor_specific.h - place for vendor additions to the uDAT API.
 *
 * This implementation defines no vendor-specific extensions; it only pulls
 * in the transport-independent vendor header.
 */
#ifndef _UDAT_VENDOR_SPECIFIC_H_
#define _UDAT_VENDOR_SPECIFIC_H_

#include <dat2/dat_vendor_specific.h>

#endif /* _UDAT_VENDOR_SPECIFIC_H_ */
