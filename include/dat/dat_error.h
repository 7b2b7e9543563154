/*
 * dat/dat_error.h - DAT 1.2 return codes.
 *
 * A DAT_RETURN is a 32-bit value built from three parts:
 *
 *     bits 31..30   class    (DAT_CLASS_ERROR / DAT_CLASS_WARNING / success)
 *     bits 29..16   type     (DAT_RETURN_TYPE, e.g. DAT_INVALID_HANDLE)
 *     bits 15..0    subtype  (DAT_RETURN_SUBTYPE, e.g. DAT_INVALID_HANDLE_EP)
 *
 * A failing call returns DAT_CLASS_ERROR | type | subtype; use
 * DAT_GET_TYPE() / DAT_GET_SUBTYPE() to take a code apart and
 * dat_strerror() (dat.h) to turn it into text.
 */
#ifndef _DAT_ERROR_H_
#define _DAT_ERROR_H_

#include <dat/dat_platform_specific.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef DAT_UINT32 DAT_RETURN;

/* Class bits. */
#define DAT_CLASS_ERROR         0x80000000U
#define DAT_CLASS_WARNING       0x40000000U
#define DAT_CLASS_SUCCESS       0x00000000U

/* Field masks. */
#define DAT_TYPE_MASK           0x3fff0000U
#define DAT_SUBTYPE_MASK        0x0000ffffU

/* Field accessors. */
#define DAT_IS_WARNING(status)  ((DAT_UINT32)(status) & DAT_CLASS_WARNING)
#define DAT_GET_TYPE(status)    ((DAT_UINT32)(status) & DAT_TYPE_MASK)
#define DAT_GET_SUBTYPE(status) ((DAT_UINT32)(status) & DAT_SUBTYPE_MASK)

/* Error / status types (bits 29..16). */
typedef enum dat_return_type
{
    DAT_SUCCESS                     = 0x00,
    DAT_ABORT                       = 0x00010000,
    DAT_CONN_QUAL_IN_USE            = 0x00020000,
    DAT_INSUFFICIENT_RESOURCES      = 0x00030000,
    DAT_INTERNAL_ERROR              = 0x00040000,
    DAT_INVALID_HANDLE              = 0x00050000,
    DAT_INVALID_PARAMETER           = 0x00060000,
    DAT_INVALID_STATE               = 0x00070000,
    DAT_LENGTH_ERROR                = 0x00080000,
    DAT_MODEL_NOT_SUPPORTED         = 0x00090000,
    DAT_PROVIDER_NOT_FOUND          = 0x000a0000,
    DAT_PRIVILEGES_VIOLATION        = 0x000b0000,
    DAT_PROTECTION_VIOLATION        = 0x000c0000,
    DAT_QUEUE_EMPTY                 = 0x000d0000,
    DAT_QUEUE_FULL                  = 0x000e0000,
    DAT_TIMEOUT_EXPIRED             = 0x000f0000,
    DAT_PROVIDER_ALREADY_REGISTERED = 0x00100000,
    DAT_PROVIDER_IN_USE             = 0x00110000,
    DAT_INVALID_ADDRESS             = 0x00120000,
    DAT_INTERRUPTED_CALL            = 0x00130000,
    DAT_CONN_QUAL_UNAVAILABLE       = 0x00140000
} DAT_RETURN_TYPE;


/*
 * "Not implemented".  The OFED 1.2 value 0xffff0000 lies outside the
 * 32-bit signed range that ISO C allows for enumerators, so it is a plain
 * unsigned constant here (the enum type above stays 4 bytes wide).  Note
 * that it also sets the class bits: DAT_GET_TYPE(DAT_NOT_IMPLEMENTED) is
 * 0x3fff0000, not DAT_NOT_IMPLEMENTED itself.
 * (Solaris headers: 0x0fff0000.)
 */
#define DAT_NOT_IMPLEMENTED     0xffff0000U

/* Alias kept for source compatibility. */
#define DAT_NAME_NOT_FOUND      DAT_PROVIDER_NOT_FOUND

/*
 * Subtypes (bits 15..0).  Solaris (illumos) additionally defines
 * DAT_INVALID_RO_COOKIE = 0x66 after DAT_THREAD_SAFETY_NOT_FOUND.
 */
typedef enum dat_return_subtype
{
    DAT_NO_SUBTYPE                         = 0x00,
    DAT_SUB_INTERRUPTED                    = 0x01,
    DAT_RESOURCE_MEMORY                    = 0x02,
    DAT_RESOURCE_DEVICE                    = 0x03,
    DAT_RESOURCE_TEP                       = 0x04,
    DAT_RESOURCE_TEVD                      = 0x05,
    DAT_RESOURCE_PROTECTION_DOMAIN         = 0x06,
    DAT_RESOURCE_MEMORY_REGION             = 0x07,
    DAT_RESOURCE_ERROR_HANDLER             = 0x08,
    DAT_RESOURCE_CREDITS                   = 0x09,
    DAT_RESOURCE_SRQ                       = 0x0a,
    DAT_INVALID_HANDLE_IA                  = 0x0b,
    DAT_INVALID_HANDLE_EP                  = 0x0c,
    DAT_INVALID_HANDLE_LMR                 = 0x0d,
    DAT_INVALID_HANDLE_RMR                 = 0x0e,
    DAT_INVALID_HANDLE_PZ                  = 0x0f,
    DAT_INVALID_HANDLE_PSP                 = 0x10,
    DAT_INVALID_HANDLE_RSP                 = 0x11,
    DAT_INVALID_HANDLE_CR                  = 0x12,
    DAT_INVALID_HANDLE_CNO                 = 0x13,
    DAT_INVALID_HANDLE_EVD_CR              = 0x14,
    DAT_INVALID_HANDLE_EVD_REQUEST         = 0x15,
    DAT_INVALID_HANDLE_EVD_RECV            = 0x16,
    DAT_INVALID_HANDLE_EVD_CONN            = 0x17,
    DAT_INVALID_HANDLE_EVD_ASYNC           = 0x18,
    DAT_INVALID_HANDLE_SRQ                 = 0x19,
    DAT_INVALID_HANDLE1                    = 0x1a,
    DAT_INVALID_HANDLE2                    = 0x1b,
    DAT_INVALID_HANDLE3                    = 0x1c,
    DAT_INVALID_HANDLE4                    = 0x1d,
    DAT_INVALID_HANDLE5                    = 0x1e,
    DAT_INVALID_HANDLE6                    = 0x1f,
    DAT_INVALID_HANDLE7                    = 0x20,
    DAT_INVALID_HANDLE8                    = 0x21,
    DAT_INVALID_HANDLE9                    = 0x22,
    DAT_INVALID_HANDLE10                   = 0x23,
    DAT_INVALID_ARG1                       = 0x24,
    DAT_INVALID_ARG2                       = 0x25,
    DAT_INVALID_ARG3                       = 0x26,
    DAT_INVALID_ARG4                       = 0x27,
    DAT_INVALID_ARG5                       = 0x28,
    DAT_INVALID_ARG6                       = 0x29,
    DAT_INVALID_ARG7                       = 0x2a,
    DAT_INVALID_ARG8                       = 0x2b,
    DAT_INVALID_ARG9                       = 0x2c,
    DAT_INVALID_ARG10                      = 0x2d,
    DAT_INVALID_STATE_EP_UNCONNECTED       = 0x2e,
    DAT_INVALID_STATE_EP_ACTCONNPENDING    = 0x2f,
    DAT_INVALID_STATE_EP_PASSCONNPENDING   = 0x30,
    DAT_INVALID_STATE_EP_TENTCONNPENDING   = 0x31,
    DAT_INVALID_STATE_EP_CONNECTED         = 0x32,
    DAT_INVALID_STATE_EP_DISCONNECTED      = 0x33,
    DAT_INVALID_STATE_EP_RESERVED          = 0x34,
    DAT_INVALID_STATE_EP_COMPLPENDING      = 0x35,
    DAT_INVALID_STATE_EP_DISCPENDING       = 0x36,
    DAT_INVALID_STATE_EP_PROVIDERCONTROL   = 0x37,
    DAT_INVALID_STATE_EP_NOTREADY          = 0x38,
    DAT_INVALID_STATE_EP_RECV_WATERMARK    = 0x39,
    DAT_INVALID_STATE_EP_PZ                = 0x3a,
    DAT_INVALID_STATE_EP_EVD_REQUEST       = 0x3b,
    DAT_INVALID_STATE_EP_EVD_RECV          = 0x3c,
    DAT_INVALID_STATE_EP_EVD_CONNECT       = 0x3d,
    DAT_INVALID_STATE_EP_UNCONFIGURED      = 0x3e,
    DAT_INVALID_STATE_EP_UNCONFRESERVED    = 0x3f,
    DAT_INVALID_STATE_EP_UNCONFPASSIVE     = 0x40,
    DAT_INVALID_STATE_EP_UNCONFTENTATIVE   = 0x41,
    DAT_INVALID_STATE_CNO_IN_USE           = 0x42,
    DAT_INVALID_STATE_CNO_DEAD             = 0x43,
    DAT_INVALID_STATE_EVD_OPEN             = 0x44,
    DAT_INVALID_STATE_EVD_ENABLED          = 0x45,
    DAT_INVALID_STATE_EVD_DISABLED         = 0x46,
    DAT_INVALID_STATE_EVD_WAITABLE         = 0x47,
    DAT_INVALID_STATE_EVD_UNWAITABLE       = 0x48,
    DAT_INVALID_STATE_EVD_IN_USE           = 0x49,
    DAT_INVALID_STATE_EVD_CONFIG_NOTIFY    = 0x4a,
    DAT_INVALID_STATE_EVD_CONFIG_SOLICITED = 0x4b,
    DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD = 0x4c,
    DAT_INVALID_STATE_EVD_WAITER           = 0x4d,
    DAT_INVALID_STATE_EVD_ASYNC            = 0x4e,
    DAT_INVALID_STATE_IA_IN_USE            = 0x4f,
    DAT_INVALID_STATE_LMR_IN_USE           = 0x50,
    DAT_INVALID_STATE_LMR_FREE             = 0x51,
    DAT_INVALID_STATE_PZ_IN_USE            = 0x52,
    DAT_INVALID_STATE_PZ_FREE              = 0x53,
    DAT_INVALID_STATE_SRQ_OPERATIONAL      = 0x54,
    DAT_INVALID_STATE_SRQ_ERROR            = 0x55,
    DAT_INVALID_STATE_SRQ_IN_USE           = 0x56,
    DAT_PRIVILEGES_READ                    = 0x57,
    DAT_PRIVILEGES_WRITE                   = 0x58,
    DAT_PRIVILEGES_RDMA_READ               = 0x59,
    DAT_PRIVILEGES_RDMA_WRITE              = 0x5a,
    DAT_PROTECTION_READ                    = 0x5b,
    DAT_PROTECTION_WRITE                   = 0x5c,
    DAT_PROTECTION_RDMA_READ               = 0x5d,
    DAT_PROTECTION_RDMA_WRITE              = 0x5e,
    DAT_INVALID_ADDRESS_UNSUPPORTED        = 0x5f,
    DAT_INVALID_ADDRESS_UNREACHABLE        = 0x60,
    DAT_INVALID_ADDRESS_MALFORMED          = 0x61,
    DAT_NAME_NOT_REGISTERED                = 0x62,
    DAT_MAJOR_NOT_FOUND                    = 0x63,
    DAT_MINOR_NOT_FOUND                    = 0x64,
    DAT_THREAD_SAFETY_NOT_FOUND            = 0x65
} DAT_RETURN_SUBTYPE;


#ifdef __cplusplus
}
#endif

#endif /* _DAT_ERROR_H_ */
