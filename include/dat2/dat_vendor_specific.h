/*
 * dat2/dat_vendor_specific.h - place for vendor additions that are common to
 * the user (uDAT) and kernel (kDAT) APIs.
 *
 * This implementation defines no vendor-specific extensions; the file exists
 * because consumers and providers may include it by name.
 */
#ifndef _DAT_VENDOR_SPECIFIC_H_
#define _DAT_VENDOR_SPECIFIC_H_

#endif /* _DAT_VENDOR_SPECIFIC_H_ */
