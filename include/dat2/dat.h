/*
 * dat2/dat.h - DAT 2.0 transport-independent API (types, constants, calls).
 *
 * Part of the libdat reimplementation of the DAT 2.0 (uDAPL 2.0) ABI,
 * compatible with OFED dapl 2.x (libdat2.so.2) on Linux.  Consumers
 * normally include <dat2/udat.h>, which includes this file.
 *
 * Type sizes follow the reference ABI exactly: every enumerated type is a
 * 4-byte integer, the IA/EP/provider attribute masks are 64-bit, handles are
 * pointers.  What changed against DAT 1.2 (<dat/dat.h>): 16-byte LMR/RMR
 * triplets with a 32-bit DAT_SEG_LENGTH, a 120-byte DAT_EVENT, renumbered
 * LMR/EP/IA/provider field masks, new CSP objects, and the extension
 * interface (dat_extension_op) enabled by DAT_EXTENSIONS (udat_config.h).
 */
#ifndef _DAT_H_
#define _DAT_H_

#include <dat2/udat_config.h>
#include <dat2/dat_platform_specific.h>
#include <dat2/dat_error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Basic types                                                         */
/* ------------------------------------------------------------------ */

typedef enum dat_boolean
{
    DAT_FALSE = 0x00,
    DAT_TRUE  = 0x01
} DAT_BOOLEAN;

typedef DAT_UINT64          DAT_VLEN;           /* length of a memory range */
typedef DAT_UINT64          DAT_VADDR;          /* virtual address */
typedef DAT_UINT32          DAT_LMR_CONTEXT;    /* local access key */
typedef DAT_UINT32          DAT_RMR_CONTEXT;    /* remote access key */
typedef DAT_UINT32          DAT_SEG_LENGTH;     /* length of one segment */
typedef DAT_UINT32          DAT_TIMEOUT;        /* microseconds */
typedef DAT_UINT64          DAT_CONN_QUAL;      /* connection qualifier */
typedef DAT_UINT64          DAT_PORT_QUAL;      /* port qualifier */

/* Wait forever. */
#define DAT_TIMEOUT_INFINITE    ((DAT_TIMEOUT) ~0)

/* Interface adapter address: an OS socket address. */
typedef DAT_SOCK_ADDR *     DAT_IA_ADDRESS_PTR;

/* IA names. */
typedef char *              DAT_NAME_PTR;
#define DAT_NAME_MAX_LENGTH     256

/* ------------------------------------------------------------------ */
/* Handles: opaque pointers                                            */
/* ------------------------------------------------------------------ */

typedef DAT_PVOID           DAT_HANDLE;
typedef DAT_HANDLE          DAT_CR_HANDLE;
typedef DAT_HANDLE          DAT_EP_HANDLE;
typedef DAT_HANDLE          DAT_EVD_HANDLE;
typedef DAT_HANDLE          DAT_IA_HANDLE;
typedef DAT_HANDLE          DAT_LMR_HANDLE;
typedef DAT_HANDLE          DAT_PSP_HANDLE;
typedef DAT_HANDLE          DAT_PZ_HANDLE;
typedef DAT_HANDLE          DAT_RMR_HANDLE;
typedef DAT_HANDLE          DAT_RSP_HANDLE;
typedef DAT_HANDLE          DAT_SRQ_HANDLE;
typedef DAT_HANDLE          DAT_CNO_HANDLE;
typedef DAT_HANDLE          DAT_CSP_HANDLE;

/* The "no object" handle. */
#define DAT_HANDLE_NULL         ((DAT_HANDLE) NULL)

/* A service point: any of the three kinds. */
typedef union dat_sp_handle
{
    DAT_RSP_HANDLE          rsp_handle;
    DAT_PSP_HANDLE          psp_handle;
    DAT_CSP_HANDLE          csp_handle;
} DAT_SP_HANDLE;

typedef enum dat_handle_type
{
    DAT_HANDLE_TYPE_CR  = 0x00,
    DAT_HANDLE_TYPE_EP  = 0x01,
    DAT_HANDLE_TYPE_EVD = 0x02,
    DAT_HANDLE_TYPE_IA  = 0x03,
    DAT_HANDLE_TYPE_LMR = 0x04,
    DAT_HANDLE_TYPE_PSP = 0x05,
    DAT_HANDLE_TYPE_PZ  = 0x06,
    DAT_HANDLE_TYPE_RMR = 0x07,
    DAT_HANDLE_TYPE_RSP = 0x08,
    DAT_HANDLE_TYPE_CNO = 0x09,
    DAT_HANDLE_TYPE_SRQ = 0x0a,
    DAT_HANDLE_TYPE_CSP = 0x0b
#ifdef DAT_EXTENSIONS
    , DAT_HANDLE_TYPE_EXTENSION_BASE = 0x0c
#endif
} DAT_HANDLE_TYPE;

/* ------------------------------------------------------------------ */
/* Consumer context and cookies (8 bytes, passed by value)             */
/* ------------------------------------------------------------------ */

typedef union dat_context
{
    DAT_PVOID               as_ptr;
    DAT_UINT64              as_64;
    DAT_UVERYLONG           as_index;
} DAT_CONTEXT;

typedef DAT_CONTEXT         DAT_DTO_COOKIE;
typedef DAT_CONTEXT         DAT_RMR_COOKIE;

/* ------------------------------------------------------------------ */
/* Flags and masks                                                     */
/* ------------------------------------------------------------------ */

typedef enum dat_evd_state
{
    DAT_EVD_STATE_ENABLED          = 0x01,
    DAT_EVD_STATE_DISABLED         = 0x02,
    DAT_EVD_STATE_WAITABLE         = 0x04,
    DAT_EVD_STATE_UNWAITABLE       = 0x08,
    DAT_EVD_STATE_CONFIG_NOTIFY    = 0x10,
    DAT_EVD_STATE_CONFIG_SOLICITED = 0x20,
    DAT_EVD_STATE_CONFIG_THRESHOLD = 0x30
} DAT_EVD_STATE;

typedef enum dat_evd_param_mask
{
    DAT_EVD_FIELD_IA_HANDLE = 0x01,
    DAT_EVD_FIELD_EVD_QLEN  = 0x02,
    DAT_EVD_FIELD_EVD_STATE = 0x04,
    DAT_EVD_FIELD_CNO       = 0x08,
    DAT_EVD_FIELD_EVD_FLAGS = 0x10,
    DAT_EVD_FIELD_ALL       = 0x1f
} DAT_EVD_PARAM_MASK;

typedef enum dat_completion_flags
{
    DAT_COMPLETION_DEFAULT_FLAG        = 0x00,
    DAT_COMPLETION_SUPPRESS_FLAG       = 0x01,
    DAT_COMPLETION_SOLICITED_WAIT_FLAG = 0x02,
    DAT_COMPLETION_UNSIGNALLED_FLAG    = 0x04,
    DAT_COMPLETION_BARRIER_FENCE_FLAG  = 0x08,
    DAT_COMPLETION_EVD_THRESHOLD_FLAG  = 0x10,
    DAT_COMPLETION_LMR_INVALIDATE_FENCE_FLAG = 0x20
} DAT_COMPLETION_FLAGS;

typedef enum dat_qos
{
    DAT_QOS_BEST_EFFORT     = 0x00,
    DAT_QOS_HIGH_THROUGHPUT = 0x01,
    DAT_QOS_LOW_LATENCY     = 0x02,
    DAT_QOS_ECONOMY         = 0x04,
    DAT_QOS_PREMIUM         = 0x08
} DAT_QOS;

typedef enum dat_connect_flags
{
    DAT_CONNECT_DEFAULT_FLAG            = 0x00,
    DAT_CONNECT_MULTIPATH_FLAG          = 0x01,
    DAT_CONNECT_MULTIPATH_REQUIRED_FLAG = 0x02
} DAT_CONNECT_FLAGS;

/* The DAT 2.0 name of DAT_CONNECT_MULTIPATH_FLAG. */
#define DAT_CONNECT_MULTIPATH_REQUESTED_FLAG    DAT_CONNECT_MULTIPATH_FLAG

typedef enum dat_close_flags
{
    DAT_CLOSE_ABRUPT_FLAG   = 0x00,
    DAT_CLOSE_GRACEFUL_FLAG = 0x01
} DAT_CLOSE_FLAGS;

#define DAT_CLOSE_DEFAULT       DAT_CLOSE_ABRUPT_FLAG

typedef enum dat_evd_flags
{
    DAT_EVD_SOFTWARE_FLAG   = 0x01,
    DAT_EVD_CR_FLAG         = 0x10,
    DAT_EVD_DTO_FLAG        = 0x20,
    DAT_EVD_CONNECTION_FLAG = 0x40,
    DAT_EVD_RMR_BIND_FLAG   = 0x80,
    DAT_EVD_ASYNC_FLAG      = 0x0100,
    DAT_EVD_DEFAULT_FLAG    = 0x01f0
#ifdef DAT_EXTENSIONS
    , DAT_EVD_EXTENSION_BASE = 0x0200
#endif
} DAT_EVD_FLAGS;

typedef enum dat_psp_flags
{
    DAT_PSP_CONSUMER_FLAG = 0x00,
    DAT_PSP_PROVIDER_FLAG = 0x01
} DAT_PSP_FLAGS;

typedef enum dat_mem_priv_flags
{
    DAT_MEM_PRIV_NONE_FLAG         = 0x00,
    DAT_MEM_PRIV_LOCAL_READ_FLAG   = 0x01,
    DAT_MEM_PRIV_REMOTE_READ_FLAG  = 0x02,
    DAT_MEM_PRIV_LOCAL_WRITE_FLAG  = 0x10,
    DAT_MEM_PRIV_REMOTE_WRITE_FLAG = 0x20,
    DAT_MEM_PRIV_ALL_FLAG          = 0x33
#ifdef DAT_EXTENSIONS
    , DAT_MEM_PRIV_EXTENSION_BASE  = 0x40
#endif
} DAT_MEM_PRIV_FLAGS;

#define DAT_MEM_PRIV_READ_FLAG  (DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_REMOTE_READ_FLAG)
#define DAT_MEM_PRIV_WRITE_FLAG (DAT_MEM_PRIV_LOCAL_WRITE_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG)

typedef enum dat_lmr_param_mask
{
    DAT_LMR_FIELD_IA_HANDLE          = 0x01,
    DAT_LMR_FIELD_MEM_TYPE           = 0x02,
    DAT_LMR_FIELD_REGION_DESC        = 0x04,
    DAT_LMR_FIELD_LENGTH             = 0x08,
    DAT_LMR_FIELD_PZ_HANDLE          = 0x10,
    DAT_LMR_FIELD_MEM_PRIV           = 0x20,
    DAT_LMR_FIELD_VA_TYPE            = 0x40,
    DAT_LMR_FIELD_LMR_CONTEXT        = 0x80,
    DAT_LMR_FIELD_RMR_CONTEXT        = 0x0100,
    DAT_LMR_FIELD_REGISTERED_SIZE    = 0x0200,
    DAT_LMR_FIELD_REGISTERED_ADDRESS = 0x0400,
    DAT_LMR_FIELD_ALL                = 0x07ff
} DAT_LMR_PARAM_MASK;

typedef enum dat_rmr_param_mask
{
    DAT_RMR_FIELD_IA_HANDLE   = 0x01,
    DAT_RMR_FIELD_PZ_HANDLE   = 0x02,
    DAT_RMR_FIELD_LMR_TRIPLET = 0x04,
    DAT_RMR_FIELD_MEM_PRIV    = 0x08,
    DAT_RMR_FIELD_RMR_CONTEXT = 0x10,
    DAT_RMR_FIELD_RMR_SCOPE   = 0x20,
    DAT_RMR_FIELD_VA_TYPE     = 0x40,
    DAT_RMR_FIELD_ALL         = 0x7f
} DAT_RMR_PARAM_MASK;

/* How an LMR or RMR is addressed: by virtual address or zero based. */
typedef enum dat_va_type
{
    DAT_VA_TYPE_VA = 0x00,
    DAT_VA_TYPE_ZB = 0x01
} DAT_VA_TYPE;

/* Who may use an RMR: one EP, the EPs of a PZ, or any EP. */
typedef enum dat_rmr_scope
{
    DAT_RMR_SCOPE_EP  = 0x00,
    DAT_RMR_SCOPE_PZ  = 0x01,
    DAT_RMR_SCOPE_ANY = 0x02
} DAT_RMR_SCOPE;

/* Which extension interface an IA offers (DAT_IA_ATTR.extension_supported). */
typedef enum dat_extension
{
    DAT_EXTENSION_NONE = 0x00,
    DAT_EXTENSION_IB   = 0x01,
    DAT_EXTENSION_IW   = 0x02
} DAT_EXTENSION;

#ifdef DAT_EXTENSIONS
#define DAT_IB_EXTENSION        1
#define DAT_IW_EXTENSION        2
#endif

/* High-availability load balancing (DAT_PROVIDER_ATTR.ha_loadbalancing). */
typedef DAT_UINT32          DAT_HA_LB;
#define DAT_HA_LB_NONE          ((DAT_HA_LB) 0)
#define DAT_HA_LB_INTERCOMM     ((DAT_HA_LB) 1)
#define DAT_HA_LB_INTRACOMM     ((DAT_HA_LB) 2)

/* Kind of a data transfer operation (DTO completion events). */
typedef enum dat_dtos
{
    DAT_DTO_SEND                    = 0x00,
    DAT_DTO_RDMA_WRITE              = 0x01,
    DAT_DTO_RDMA_READ               = 0x02,
    DAT_DTO_RECEIVE                 = 0x03,
    DAT_DTO_RECEIVE_WITH_INVALIDATE = 0x04,
    DAT_DTO_BIND_MW                 = 0x05,
    DAT_DTO_LMR_FMR                 = 0x06,
    DAT_DTO_LMR_INVALIDATE          = 0x07
#ifdef DAT_EXTENSIONS
    , DAT_DTO_EXTENSION_BASE        = 0x08
#endif
} DAT_DTOS;

typedef enum dat_iov_ownership
{
    DAT_IOV_CONSUMER       = 0x00,
    DAT_IOV_PROVIDER_NOMOD = 0x01,
    DAT_IOV_PROVIDER_MOD   = 0x02
} DAT_IOV_OWNERSHIP;

typedef enum dat_ep_creator_for_psp
{
    DAT_PSP_CREATES_EP_NEVER   = 0x00,
    DAT_PSP_CREATES_EP_IFASKED = 0x01,
    DAT_PSP_CREATES_EP_ALWAYS  = 0x02
} DAT_EP_CREATOR_FOR_PSP;

typedef enum dat_service_type
{
    DAT_SERVICE_TYPE_RC = 0x00
#ifdef DAT_EXTENSIONS
    , DAT_SERVICE_TYPE_EXTENSION_BASE = 0x01
#endif
} DAT_SERVICE_TYPE;

typedef enum dat_ep_state
{
    DAT_EP_STATE_UNCONNECTED                  = 0x00,
    DAT_EP_STATE_UNCONFIGURED_UNCONNECTED     = 0x01,
    DAT_EP_STATE_RESERVED                     = 0x02,
    DAT_EP_STATE_UNCONFIGURED_RESERVED        = 0x03,
    DAT_EP_STATE_PASSIVE_CONNECTION_PENDING   = 0x04,
    DAT_EP_STATE_UNCONFIGURED_PASSIVE         = 0x05,
    DAT_EP_STATE_ACTIVE_CONNECTION_PENDING    = 0x06,
    DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING = 0x07,
    DAT_EP_STATE_UNCONFIGURED_TENTATIVE       = 0x08,
    DAT_EP_STATE_CONNECTED                    = 0x09,
    DAT_EP_STATE_DISCONNECT_PENDING           = 0x0a,
    DAT_EP_STATE_DISCONNECTED                 = 0x0b,
    DAT_EP_STATE_COMPLETION_PENDING           = 0x0c,
    DAT_EP_STATE_CONNECTED_SINGLE_PATH        = 0x0d,
    DAT_EP_STATE_CONNECTED_MULTI_PATH         = 0x0e
} DAT_EP_STATE;

#define DAT_EP_STATE_ERROR      DAT_EP_STATE_DISCONNECTED

/* Endpoint parameter mask: a 64-bit set of DAT_EP_FIELD_* bits. */
typedef DAT_UINT64          DAT_EP_PARAM_MASK;

#define DAT_EP_FIELD_IA_HANDLE                          UINT64_C(0x00000001)
#define DAT_EP_FIELD_EP_STATE                           UINT64_C(0x00000002)
#define DAT_EP_FIELD_COMM                               UINT64_C(0x00000004)
#define DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR               UINT64_C(0x00000008)
#define DAT_EP_FIELD_LOCAL_PORT_QUAL                    UINT64_C(0x00000010)
#define DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR              UINT64_C(0x00000020)
#define DAT_EP_FIELD_REMOTE_PORT_QUAL                   UINT64_C(0x00000040)
#define DAT_EP_FIELD_PZ_HANDLE                          UINT64_C(0x00000080)
#define DAT_EP_FIELD_RECV_EVD_HANDLE                    UINT64_C(0x00000100)
#define DAT_EP_FIELD_REQUEST_EVD_HANDLE                 UINT64_C(0x00000200)
#define DAT_EP_FIELD_CONNECT_EVD_HANDLE                 UINT64_C(0x00000400)
#define DAT_EP_FIELD_SRQ_HANDLE                         UINT64_C(0x00000800)
#define DAT_EP_FIELD_EP_ATTR_SERVICE_TYPE               UINT64_C(0x00001000)
#define DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE           UINT64_C(0x00002000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE              UINT64_C(0x00004000)
#define DAT_EP_FIELD_EP_ATTR_QOS                        UINT64_C(0x00008000)
#define DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS      UINT64_C(0x00010000)
#define DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS   UINT64_C(0x00020000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS              UINT64_C(0x00040000)
#define DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS           UINT64_C(0x00080000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV               UINT64_C(0x00100000)
#define DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV            UINT64_C(0x00200000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN           UINT64_C(0x00400000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT          UINT64_C(0x00800000)
#define DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW                UINT64_C(0x01000000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV          UINT64_C(0x02000000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_WRITE_IOV         UINT64_C(0x04000000)
#define DAT_EP_FIELD_EP_ATTR_NUM_TRANSPORT_ATTR         UINT64_C(0x08000000)
#define DAT_EP_FIELD_EP_ATTR_TRANSPORT_SPECIFIC_ATTR    UINT64_C(0x10000000)
#define DAT_EP_FIELD_EP_ATTR_NUM_PROVIDER_ATTR          UINT64_C(0x20000000)
#define DAT_EP_FIELD_EP_ATTR_PROVIDER_SPECIFIC_ATTR     UINT64_C(0x40000000)
#define DAT_EP_FIELD_EP_ATTR_ALL                        UINT64_C(0x7ffff000)
#define DAT_EP_FIELD_ALL                                UINT64_C(0x7fffffff)

/* Interface adapter attribute mask: a 64-bit set of DAT_IA_FIELD_* bits. */
typedef DAT_UINT64          DAT_IA_ATTR_MASK;

#define DAT_IA_FIELD_IA_ADAPTER_NAME                        UINT64_C(0x000000001)
#define DAT_IA_FIELD_IA_VENDOR_NAME                         UINT64_C(0x000000002)
#define DAT_IA_FIELD_IA_HARDWARE_MAJOR_VERSION              UINT64_C(0x000000004)
#define DAT_IA_FIELD_IA_HARDWARE_MINOR_VERSION              UINT64_C(0x000000008)
#define DAT_IA_FIELD_IA_FIRMWARE_MAJOR_VERSION              UINT64_C(0x000000010)
#define DAT_IA_FIELD_IA_FIRMWARE_MINOR_VERSION              UINT64_C(0x000000020)
#define DAT_IA_FIELD_IA_ADDRESS_PTR                         UINT64_C(0x000000040)
#define DAT_IA_FIELD_IA_MAX_EPS                             UINT64_C(0x000000080)
#define DAT_IA_FIELD_IA_MAX_DTO_PER_EP                      UINT64_C(0x000000100)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_IN             UINT64_C(0x000000200)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_OUT            UINT64_C(0x000000400)
#define DAT_IA_FIELD_IA_MAX_EVDS                            UINT64_C(0x000000800)
#define DAT_IA_FIELD_IA_MAX_EVD_QLEN                        UINT64_C(0x000001000)
#define DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_DTO            UINT64_C(0x000002000)
#define DAT_IA_FIELD_IA_MAX_LMRS                            UINT64_C(0x000004000)
#define DAT_IA_FIELD_IA_MAX_LMR_BLOCK_SIZE                  UINT64_C(0x000008000)
#define DAT_IA_FIELD_IA_MAX_LMR_VIRTUAL_ADDRESS             UINT64_C(0x000010000)
#define DAT_IA_FIELD_IA_MAX_PZS                             UINT64_C(0x000020000)
#define DAT_IA_FIELD_IA_MAX_MESSAGE_SIZE                    UINT64_C(0x000040000)
#define DAT_IA_FIELD_IA_MAX_MTU_SIZE                        DAT_IA_FIELD_IA_MAX_MESSAGE_SIZE
#define DAT_IA_FIELD_IA_MAX_RDMA_SIZE                       UINT64_C(0x000080000)
#define DAT_IA_FIELD_IA_MAX_RMRS                            UINT64_C(0x000100000)
#define DAT_IA_FIELD_IA_MAX_RMR_TARGET_ADDRESS              UINT64_C(0x000200000)
#define DAT_IA_FIELD_IA_MAX_SRQS                            UINT64_C(0x000400000)
#define DAT_IA_FIELD_IA_MAX_EP_PER_SRQ                      UINT64_C(0x000800000)
#define DAT_IA_FIELD_IA_MAX_RECV_PER_SRQ                    UINT64_C(0x001000000)
#define DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_RDMA_READ      UINT64_C(0x002000000)
#define DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_RDMA_WRITE     UINT64_C(0x004000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_IN                    UINT64_C(0x008000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_OUT                   UINT64_C(0x010000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_IN_GUARANTEED  UINT64_C(0x020000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_OUT_GUARANTEED UINT64_C(0x040000000)
#define DAT_IA_FIELD_IA_ZB_SUPPORTED                        UINT64_C(0x0080000000)
#define DAT_IA_FIELD_IA_EXTENSIONS_SUPPORTED                UINT64_C(0x0100000000)
#define DAT_IA_FIELD_IA_EXTENSION                           DAT_IA_FIELD_IA_EXTENSIONS_SUPPORTED
#define DAT_IA_FIELD_IA_EXTENSION_VERSION                   UINT64_C(0x0200000000)
#define DAT_IA_FIELD_IA_NUM_TRANSPORT_ATTR                  UINT64_C(0x0400000000)
#define DAT_IA_FIELD_IA_TRANSPORT_ATTR                      UINT64_C(0x0800000000)
#define DAT_IA_FIELD_IA_NUM_VENDOR_ATTR                     UINT64_C(0x1000000000)
#define DAT_IA_FIELD_IA_VENDOR_ATTR                         UINT64_C(0x2000000000)
#define DAT_IA_FIELD_ALL                                    UINT64_C(0x3fffffffff)
#define DAT_IA_FIELD_NONE                                   UINT64_C(0x0000000000)
#define DAT_IA_ALL                                          DAT_IA_FIELD_ALL
/*
 * An older name kept for source compatibility.  As in the OFED headers it
 * expands to DAT_IA_FIELD_IA_MAX_DTO_PER_EP_IN, which no DAT header defines,
 * so only #ifdef tests of it compile; use DAT_IA_FIELD_IA_MAX_DTO_PER_EP.
 */
#define DAT_IA_FIELD_IA_MAX_DTO_PER_OP                      DAT_IA_FIELD_IA_MAX_DTO_PER_EP_IN

/* Provider attribute mask: a 64-bit set of DAT_PROVIDER_FIELD_* bits. */
typedef DAT_UINT64          DAT_PROVIDER_ATTR_MASK;

#define DAT_PROVIDER_FIELD_PROVIDER_NAME                    UINT64_C(0x0000001)
#define DAT_PROVIDER_FIELD_PROVIDER_VERSION_MAJOR           UINT64_C(0x0000002)
#define DAT_PROVIDER_FIELD_PROVIDER_VERSION_MINOR           UINT64_C(0x0000004)
#define DAT_PROVIDER_FIELD_DAPL_VERSION_MAJOR               UINT64_C(0x0000008)
#define DAT_PROVIDER_FIELD_DAPL_VERSION_MINOR               UINT64_C(0x0000010)
#define DAT_PROVIDER_FIELD_LMR_MEM_TYPE_SUPPORTED           UINT64_C(0x0000020)
#define DAT_PROVIDER_FIELD_IOV_OWNERSHIP                    UINT64_C(0x0000040)
#define DAT_PROVIDER_FIELD_DAT_QOS_SUPPORTED                UINT64_C(0x0000080)
#define DAT_PROVIDER_FIELD_COMPLETION_FLAGS_SUPPORTED       UINT64_C(0x0000100)
#define DAT_PROVIDER_FIELD_IS_THREAD_SAFE                   UINT64_C(0x0000200)
#define DAT_PROVIDER_FIELD_MAX_PRIVATE_DATA_SIZE            UINT64_C(0x0000400)
#define DAT_PROVIDER_FIELD_SUPPORTS_MULTIPATH               UINT64_C(0x0000800)
#define DAT_PROVIDER_FIELD_EP_CREATOR                       UINT64_C(0x0001000)
#define DAT_PROVIDER_FIELD_PZ_SUPPORT                       UINT64_C(0x0002000)
#define DAT_PROVIDER_FIELD_OPTIMAL_BUFFER_ALIGNMENT         UINT64_C(0x0004000)
#define DAT_PROVIDER_FIELD_EVD_STREAM_MERGING_SUPPORTED     UINT64_C(0x0008000)
#define DAT_PROVIDER_FIELD_SRQ_SUPPORTED                    UINT64_C(0x0010000)
#define DAT_PROVIDER_FIELD_SRQ_WATERMARKS_SUPPORTED         UINT64_C(0x0020000)
#define DAT_PROVIDER_FIELD_SRQ_EP_PZ_DIFFERENCE_SUPPORTED   UINT64_C(0x0040000)
#define DAT_PROVIDER_FIELD_SRQ_INFO_SUPPORTED               UINT64_C(0x0080000)
#define DAT_PROVIDER_FIELD_EP_RECV_INFO_SUPPORTED           UINT64_C(0x0100000)
#define DAT_PROVIDER_FIELD_LMR_SYNC_REQ                     UINT64_C(0x0200000)
#define DAT_PROVIDER_FIELD_DTO_ASYNC_RETURN_GUARANTEED      UINT64_C(0x0400000)
#define DAT_PROVIDER_FIELD_RDMA_WRITE_FOR_RDMA_READ_REQ     UINT64_C(0x0800000)
#define DAT_PROVIDER_FIELD_RDMA_READ_LMR_RMR_CONTEXT_EXPOSURE UINT64_C(0x1000000)
#define DAT_PROVIDER_FIELD_RMR_SCOPE_SUPPORTED              UINT64_C(0x2000000)
#define DAT_PROVIDER_FIELD_IS_SIGNAL_SAFE                   UINT64_C(0x4000000)
#define DAT_PROVIDER_FIELD_HA_SUPPORTED                     UINT64_C(0x8000000)
#define DAT_PROVIDER_FIELD_HA_LB                            UINT64_C(0x10000000)
#define DAT_PROVIDER_FIELD_NUM_PROVIDER_SPECIFIC_ATTR       UINT64_C(0x20000000)
#define DAT_PROVIDER_FIELD_PROVIDER_SPECIFIC_ATTR           UINT64_C(0x40000000)
#define DAT_PROVIDER_FIELD_ALL                              UINT64_C(0x7fffffff)
#define DAT_PROVIDER_FIELD_NONE                             UINT64_C(0x0000000)

/* Note the order: DAT 1.2 had OPERATIONAL 0 and ERROR 1. */
typedef enum dat_srq_state
{
    DAT_SRQ_STATE_ERROR       = 0x00,
    DAT_SRQ_STATE_OPERATIONAL = 0x01,
    DAT_SRQ_STATE_SHUTDOWN    = 0x02
} DAT_SRQ_STATE;

typedef enum dat_srq_param_mask
{
    DAT_SRQ_FIELD_IA_HANDLE             = 0x01,
    DAT_SRQ_FIELD_SRQ_STATE             = 0x02,
    DAT_SRQ_FIELD_PZ_HANDLE             = 0x04,
    DAT_SRQ_FIELD_MAX_RECV_DTO          = 0x08,
    DAT_SRQ_FIELD_MAX_RECV_IOV          = 0x10,
    DAT_SRQ_FIELD_LOW_WATERMARK         = 0x20,
    DAT_SRQ_FIELD_AVAILABLE_DTO_COUNT   = 0x40,
    DAT_SRQ_FIELD_OUTSTANDING_DTO_COUNT = 0x80,
    DAT_SRQ_FIELD_ALL                   = 0xff
} DAT_SRQ_PARAM_MASK;

typedef enum dat_pz_param_mask
{
    DAT_PZ_FIELD_IA_HANDLE = 0x01,
    DAT_PZ_FIELD_ALL       = 0x01
} DAT_PZ_PARAM_MASK;

typedef enum dat_psp_param_mask
{
    DAT_PSP_FIELD_IA_HANDLE  = 0x01,
    DAT_PSP_FIELD_CONN_QUAL  = 0x02,
    DAT_PSP_FIELD_EVD_HANDLE = 0x04,
    DAT_PSP_FIELD_PSP_FLAGS  = 0x08,
    DAT_PSP_FIELD_ALL        = 0x0f
} DAT_PSP_PARAM_MASK;

typedef enum dat_rsp_param_mask
{
    DAT_RSP_FIELD_IA_HANDLE  = 0x01,
    DAT_RSP_FIELD_CONN_QUAL  = 0x02,
    DAT_RSP_FIELD_EVD_HANDLE = 0x04,
    DAT_RSP_FIELD_EP_HANDLE  = 0x08,
    DAT_RSP_FIELD_ALL        = 0x0f
} DAT_RSP_PARAM_MASK;

typedef enum dat_cr_param_mask
{
    DAT_CR_FIELD_REMOTE_IA_ADDRESS_PTR = 0x01,
    DAT_CR_FIELD_REMOTE_PORT_QUAL      = 0x02,
    DAT_CR_FIELD_PRIVATE_DATA_SIZE     = 0x04,
    DAT_CR_FIELD_PRIVATE_DATA          = 0x08,
    DAT_CR_FIELD_LOCAL_EP_HANDLE       = 0x10,
    DAT_CR_FIELD_ALL                   = 0x1f
} DAT_CR_PARAM_MASK;

typedef enum dat_csp_param_mask
{
    DAT_CSP_FIELD_IA_HANDLE  = 0x01,
    DAT_CSP_FIELD_COMM       = 0x02,
    DAT_CSP_FIELD_IA_ADDRESS = 0x04,
    DAT_CSP_FIELD_EVD_HANDLE = 0x08,
    DAT_CSP_FIELD_ALL        = 0x0f
} DAT_CSP_PARAM_MASK;

typedef enum dat_pz_support
{
    DAT_PZ_UNIQUE    = 0x00,
    DAT_PZ_SHAREABLE = 0x01
} DAT_PZ_SUPPORT;

/* Watermark and "unknown" values for DAT_COUNT fields. */
#define DAT_WATERMARK_INFINITE  ((DAT_COUNT) ~0)
#define DAT_HW_DEFAULT          DAT_WATERMARK_INFINITE
#define DAT_SRQ_LW_DEFAULT      0x0
#define DAT_VALUE_UNKNOWN       (((DAT_COUNT) ~0) - 1)

/* ------------------------------------------------------------------ */
/* Attribute / parameter structures                                    */
/* ------------------------------------------------------------------ */

/* A name/value pair of provider- or transport-specific information. */
typedef struct dat_named_attr
{
    const char *            name;
    const char *            value;
} DAT_NAMED_ATTR;

/*
 * Local and remote memory segments: 16 bytes, address first (1.2 had 24
 * bytes with the context first; the RMR's target_address is now
 * virtual_address).
 */
typedef struct dat_lmr_triplet
{
    DAT_VADDR               virtual_address;
    DAT_SEG_LENGTH          segment_length;
    DAT_LMR_CONTEXT         lmr_context;
} DAT_LMR_TRIPLET;

typedef struct dat_rmr_triplet
{
    DAT_VADDR               virtual_address;
    DAT_SEG_LENGTH          segment_length;
    DAT_RMR_CONTEXT         rmr_context;
} DAT_RMR_TRIPLET;

typedef struct dat_ep_attr
{
    DAT_SERVICE_TYPE        service_type;
    DAT_SEG_LENGTH          max_message_size;
    DAT_SEG_LENGTH          max_rdma_size;
    DAT_QOS                 qos;
    DAT_COMPLETION_FLAGS    recv_completion_flags;
    DAT_COMPLETION_FLAGS    request_completion_flags;
    DAT_COUNT               max_recv_dtos;
    DAT_COUNT               max_request_dtos;
    DAT_COUNT               max_recv_iov;
    DAT_COUNT               max_request_iov;
    DAT_COUNT               max_rdma_read_in;
    DAT_COUNT               max_rdma_read_out;
    DAT_COUNT               srq_soft_hw;
    DAT_COUNT               max_rdma_read_iov;
    DAT_COUNT               max_rdma_write_iov;
    DAT_COUNT               ep_transport_specific_count;
    DAT_NAMED_ATTR *        ep_transport_specific;
    DAT_COUNT               ep_provider_specific_count;
    DAT_NAMED_ATTR *        ep_provider_specific;
} DAT_EP_ATTR;

typedef struct dat_ep_param
{
    DAT_IA_HANDLE           ia_handle;
    DAT_EP_STATE            ep_state;
    DAT_COMM                comm;
    DAT_IA_ADDRESS_PTR      local_ia_address_ptr;
    DAT_PORT_QUAL           local_port_qual;
    DAT_IA_ADDRESS_PTR      remote_ia_address_ptr;
    DAT_PORT_QUAL           remote_port_qual;
    DAT_PZ_HANDLE           pz_handle;
    DAT_EVD_HANDLE          recv_evd_handle;
    DAT_EVD_HANDLE          request_evd_handle;
    DAT_EVD_HANDLE          connect_evd_handle;
    DAT_SRQ_HANDLE          srq_handle;
    DAT_EP_ATTR             ep_attr;
} DAT_EP_PARAM;

typedef struct dat_rmr_param
{
    DAT_IA_HANDLE           ia_handle;
    DAT_PZ_HANDLE           pz_handle;
    DAT_LMR_TRIPLET         lmr_triplet;
    DAT_MEM_PRIV_FLAGS      mem_priv;
    DAT_RMR_CONTEXT         rmr_context;
    DAT_RMR_SCOPE           rmr_scope;
    DAT_VA_TYPE             va_type;
} DAT_RMR_PARAM;

typedef struct dat_srq_attr
{
    DAT_COUNT               max_recv_dtos;
    DAT_COUNT               max_recv_iov;
    DAT_COUNT               low_watermark;
} DAT_SRQ_ATTR;

typedef struct dat_srq_param
{
    DAT_IA_HANDLE           ia_handle;
    DAT_SRQ_STATE           srq_state;
    DAT_PZ_HANDLE           pz_handle;
    DAT_COUNT               max_recv_dtos;
    DAT_COUNT               max_recv_iov;
    DAT_COUNT               low_watermark;
    DAT_COUNT               available_dto_count;
    DAT_COUNT               outstanding_dto_count;
} DAT_SRQ_PARAM;

typedef struct dat_pz_param
{
    DAT_IA_HANDLE           ia_handle;
} DAT_PZ_PARAM;

typedef struct dat_psp_param
{
    DAT_IA_HANDLE           ia_handle;
    DAT_CONN_QUAL           conn_qual;
    DAT_EVD_HANDLE          evd_handle;
    DAT_PSP_FLAGS           psp_flags;
} DAT_PSP_PARAM;

typedef struct dat_rsp_param
{
    DAT_IA_HANDLE           ia_handle;
    DAT_CONN_QUAL           conn_qual;
    DAT_EVD_HANDLE          evd_handle;
    DAT_EP_HANDLE           ep_handle;
} DAT_RSP_PARAM;

typedef struct dat_cr_param
{
    DAT_IA_ADDRESS_PTR      remote_ia_address_ptr;
    DAT_PORT_QUAL           remote_port_qual;
    DAT_COUNT               private_data_size;
    DAT_PVOID               private_data;
    DAT_EP_HANDLE           local_ep_handle;
} DAT_CR_PARAM;

/* A common service point: listens on an address for a communicator. */
typedef struct dat_csp_param
{
    DAT_IA_HANDLE           ia_handle;
    DAT_COMM *              comm;
    DAT_IA_ADDRESS_PTR      address_ptr;
    DAT_EVD_HANDLE          evd_handle;
} DAT_CSP_PARAM;

/* Identity of a provider in the registry (268 bytes, 4-byte aligned). */
typedef struct dat_provider_info
{
    char                    ia_name[DAT_NAME_MAX_LENGTH];
    DAT_UINT32              dapl_version_major;
    DAT_UINT32              dapl_version_minor;
    DAT_BOOLEAN             is_thread_safe;
} DAT_PROVIDER_INFO;

/*
 * Structures whose contents are defined by the user-level API (udat.h);
 * declared here so that the prototypes below can use pointers to them.
 */
typedef struct dat_ia_attr          DAT_IA_ATTR;

/*
 * Older names of two DAT_IA_ATTR members, kept for source compatibility
 * (ia_attr.max_mtu_size reads max_message_size).  Being object-like macros,
 * they rename every use of these identifiers, as the OFED headers do.
 */
#define max_rdma_read_per_ep    max_rdma_read_per_ep_in
#define max_mtu_size            max_message_size
typedef struct dat_provider_attr    DAT_PROVIDER_ATTR;
typedef struct dat_evd_param        DAT_EVD_PARAM;
typedef struct dat_lmr_param        DAT_LMR_PARAM;

/* ------------------------------------------------------------------ */
/* Events (DAT_EVENT is 120 bytes on LP64)                             */
/* ------------------------------------------------------------------ */

typedef enum dat_dto_completion_status
{
    DAT_DTO_SUCCESS                = 0x00,
    DAT_DTO_ERR_FLUSHED            = 0x01,
    DAT_DTO_ERR_LOCAL_LENGTH       = 0x02,
    DAT_DTO_ERR_LOCAL_EP           = 0x03,
    DAT_DTO_ERR_LOCAL_PROTECTION   = 0x04,
    DAT_DTO_ERR_BAD_RESPONSE       = 0x05,
    DAT_DTO_ERR_REMOTE_ACCESS      = 0x06,
    DAT_DTO_ERR_REMOTE_RESPONDER   = 0x07,
    DAT_DTO_ERR_TRANSPORT          = 0x08,
    DAT_DTO_ERR_RECEIVER_NOT_READY = 0x09,
    DAT_DTO_ERR_PARTIAL_PACKET     = 0x0a,
    DAT_RMR_OPERATION_FAILED       = 0x0b,
    DAT_DTO_ERR_LOCAL_MM_ERROR     = 0x0c
} DAT_DTO_COMPLETION_STATUS;

#define DAT_DTO_FAILURE         DAT_DTO_ERR_FLUSHED
#define DAT_DTO_LENGTH_ERROR    DAT_DTO_ERR_LOCAL_LENGTH

/* An RMR bind completion reports its status as a DAT_DTO_COMPLETION_STATUS. */
#define DAT_RMR_BIND_COMPLETION_STATUS  DAT_DTO_COMPLETION_STATUS

/* Status values of an RMR bind completion (a DAT_DTO_COMPLETION_STATUS). */
#define DAT_RMR_BIND_SUCCESS    DAT_DTO_SUCCESS
#define DAT_RMR_BIND_FAILURE    DAT_DTO_ERR_FLUSHED

/* The async error reason tags have no dat_ prefix, as in OFED's headers. */
typedef enum ia_async_error_reason
{
    DAT_IA_CATASTROPHIC_ERROR = 0x00,
    DAT_IA_OTHER_ERROR        = 0x01
} DAT_IA_ASYNC_ERROR_REASON;

typedef enum ep_async_error_reason
{
    DAT_EP_TRANSFER_TO_ERROR          = 0x00,
    DAT_EP_OTHER_ERROR                = 0x01,
    DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT = 0x02
} DAT_EP_ASYNC_ERROR_REASON;

typedef enum evd_async_error_reason
{
    DAT_EVD_OVERFLOW_ERROR = 0x00,
    DAT_EVD_OTHER_ERROR    = 0x01
} DAT_EVD_ASYNC_ERROR_REASON;

typedef enum srq_async_error_reason
{
    DAT_SRQ_TRANSFER_TO_ERROR   = 0x00,
    DAT_SRQ_OTHER_ERROR         = 0x01,
    DAT_SRQ_LOW_WATERMARK_EVENT = 0x02
} DAT_SRQ_ASYNC_ERROR_REASON;

typedef enum lmr_async_error_reason
{
    DAT_LMR_OTHER_ERROR = 0x00
} DAT_LMR_ASYNC_ERROR_REASON;

typedef enum rmr_async_error_reason
{
    DAT_RMR_OTHER_ERROR = 0x00
} DAT_RMR_ASYNC_ERROR_REASON;

typedef enum pz_async_error_reason
{
    DAT_PZ_OTHER_ERROR = 0x00
} DAT_PZ_ASYNC_ERROR_REASON;

typedef enum dat_event_number
{
    DAT_DTO_COMPLETION_EVENT                     = 0x01,
    DAT_RMR_BIND_COMPLETION_EVENT                = 0x1001,
    DAT_CONNECTION_REQUEST_EVENT                 = 0x2001,
    DAT_CONNECTION_EVENT_ESTABLISHED             = 0x4001,
    DAT_CONNECTION_EVENT_PEER_REJECTED           = 0x4002,
    DAT_CONNECTION_EVENT_NON_PEER_REJECTED       = 0x4003,
    DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR = 0x4004,
    DAT_CONNECTION_EVENT_DISCONNECTED            = 0x4005,
    DAT_CONNECTION_EVENT_BROKEN                  = 0x4006,
    DAT_CONNECTION_EVENT_TIMED_OUT               = 0x4007,
    DAT_CONNECTION_EVENT_UNREACHABLE             = 0x4008,
    DAT_ASYNC_ERROR_EVD_OVERFLOW                 = 0x8001,
    DAT_ASYNC_ERROR_IA_CATASTROPHIC              = 0x8002,
    DAT_ASYNC_ERROR_EP_BROKEN                    = 0x8003,
    DAT_ASYNC_ERROR_TIMED_OUT                    = 0x8004,
    DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR      = 0x8005,
    DAT_HA_DOWN_TO_1                             = 0x8101,
    DAT_HA_UP_TO_MULTI_PATH                      = 0x8102,
    DAT_SOFTWARE_EVENT                           = 0x00010001
#ifdef DAT_EXTENSIONS
    , DAT_EXTENSION_EVENT                        = 0x00020000,
    DAT_IB_EXTENSION_RANGE_BASE                  = 0x00040000,
    DAT_IW_EXTENSION_RANGE_BASE                  = 0x00080000
#endif
} DAT_EVENT_NUMBER;

typedef struct dat_dto_completion_event_data
{
    DAT_EP_HANDLE               ep_handle;
    DAT_DTO_COOKIE              user_cookie;
    DAT_DTO_COMPLETION_STATUS   status;
    DAT_SEG_LENGTH              transfered_length;  /* spelling as in the API */
    DAT_DTOS                    operation;
    DAT_RMR_CONTEXT             rmr_context;
} DAT_DTO_COMPLETION_EVENT_DATA;

typedef struct dat_rmr_bind_completion_event_data
{
    DAT_RMR_HANDLE              rmr_handle;
    DAT_RMR_COOKIE              user_cookie;
    DAT_DTO_COMPLETION_STATUS   status;
} DAT_RMR_BIND_COMPLETION_EVENT_DATA;

typedef struct dat_cr_arrival_event_data
{
    DAT_SP_HANDLE               sp_handle;
    DAT_IA_ADDRESS_PTR          local_ia_address_ptr;
    DAT_CONN_QUAL               conn_qual;
    DAT_CR_HANDLE               cr_handle;
    DAT_BOOLEAN                 truncate_flag;      /* private data cut short */
} DAT_CR_ARRIVAL_EVENT_DATA;

typedef struct dat_connection_event_data
{
    DAT_EP_HANDLE               ep_handle;
    DAT_COUNT                   private_data_size;
    DAT_PVOID                   private_data;
} DAT_CONNECTION_EVENT_DATA;

typedef struct dat_asynch_error_event_data
{
    DAT_HANDLE                  dat_handle;
    DAT_COUNT                   reason;
} DAT_ASYNCH_ERROR_EVENT_DATA;

typedef struct dat_software_event_data
{
    DAT_PVOID                   pointer;
} DAT_SOFTWARE_EVENT_DATA;

typedef union dat_event_data
{
    DAT_DTO_COMPLETION_EVENT_DATA       dto_completion_event_data;
    DAT_RMR_BIND_COMPLETION_EVENT_DATA  rmr_completion_event_data;
    DAT_CR_ARRIVAL_EVENT_DATA           cr_arrival_event_data;
    DAT_CONNECTION_EVENT_DATA           connect_event_data;
    DAT_ASYNCH_ERROR_EVENT_DATA         asynch_error_event_data;
    DAT_SOFTWARE_EVENT_DATA             software_event_data;
} DAT_EVENT_DATA;

typedef struct dat_event
{
    DAT_EVENT_NUMBER            event_number;
    DAT_EVD_HANDLE              evd_handle;
    DAT_EVENT_DATA              event_data;
    DAT_UINT64                  event_extension_data[8];
} DAT_EVENT;

/* ------------------------------------------------------------------ */
/* Calls                                                               */
/* ------------------------------------------------------------------ */

/*
 * dat_ia_open() is a macro: it records the API version and thread-safety
 * level of the headers the consumer was compiled with (udat_config.h).
 * dat_ia_openv() is the real entry point.
 */
#define dat_ia_open(name, qlen, async_evd, ia) \
    dat_ia_openv((name), (qlen), (async_evd), (ia), \
                 DAT_VERSION_MAJOR, DAT_VERSION_MINOR, DAT_THREADSAFE)

/* IA */
DAT_EXPORT DAT_RETURN dat_ia_openv(
    const DAT_NAME_PTR name,
    DAT_COUNT async_event_qlen,
    DAT_EVD_HANDLE *async_event_handle,
    DAT_IA_HANDLE *ia_handle,
    DAT_UINT32 dapl_major,
    DAT_UINT32 dapl_minor,
    DAT_BOOLEAN thread_safety);

DAT_EXPORT DAT_RETURN dat_ia_close(
    DAT_IA_HANDLE ia_handle,
    DAT_CLOSE_FLAGS ia_flags);

DAT_EXPORT DAT_RETURN dat_ia_query(
    DAT_IA_HANDLE ia_handle,
    DAT_EVD_HANDLE *async_evd_handle,
    DAT_IA_ATTR_MASK ia_attr_mask,
    DAT_IA_ATTR *ia_attr,
    DAT_PROVIDER_ATTR_MASK provider_attr_mask,
    DAT_PROVIDER_ATTR *provider_attr);

/* Handle helpers */
DAT_EXPORT DAT_RETURN dat_set_consumer_context(
    DAT_HANDLE dat_handle,
    DAT_CONTEXT context);

DAT_EXPORT DAT_RETURN dat_get_consumer_context(
    DAT_HANDLE dat_handle,
    DAT_CONTEXT *context);

DAT_EXPORT DAT_RETURN dat_get_handle_type(
    DAT_HANDLE dat_handle,
    DAT_HANDLE_TYPE *type);

/* Connection requests */
DAT_EXPORT DAT_RETURN dat_cr_query(
    DAT_CR_HANDLE cr_handle,
    DAT_CR_PARAM_MASK cr_param_mask,
    DAT_CR_PARAM *cr_param);

DAT_EXPORT DAT_RETURN dat_cr_accept(
    DAT_CR_HANDLE cr_handle,
    DAT_EP_HANDLE ep_handle,
    DAT_COUNT private_data_size,
    const DAT_PVOID private_data);

DAT_EXPORT DAT_RETURN dat_cr_reject(
    DAT_CR_HANDLE cr_handle,
    DAT_COUNT private_data_size,
    const DAT_PVOID private_data);

DAT_EXPORT DAT_RETURN dat_cr_handoff(
    DAT_CR_HANDLE cr_handle,
    DAT_CONN_QUAL handoff);

/* Event dispatchers (transport independent part) */
DAT_EXPORT DAT_RETURN dat_evd_resize(
    DAT_EVD_HANDLE evd_handle,
    DAT_COUNT evd_min_qlen);

DAT_EXPORT DAT_RETURN dat_evd_post_se(
    DAT_EVD_HANDLE evd_handle,
    const DAT_EVENT *event);

DAT_EXPORT DAT_RETURN dat_evd_dequeue(
    DAT_EVD_HANDLE evd_handle,
    DAT_EVENT *event);

DAT_EXPORT DAT_RETURN dat_evd_query(
    DAT_EVD_HANDLE evd_handle,
    DAT_EVD_PARAM_MASK evd_param_mask,
    DAT_EVD_PARAM *evd_param);

DAT_EXPORT DAT_RETURN dat_evd_free(
    DAT_EVD_HANDLE evd_handle);

/* Endpoints */
DAT_EXPORT DAT_RETURN dat_ep_create(
    DAT_IA_HANDLE ia_handle,
    DAT_PZ_HANDLE pz_handle,
    DAT_EVD_HANDLE recv_completion_evd_handle,
    DAT_EVD_HANDLE request_completion_evd_handle,
    DAT_EVD_HANDLE connect_evd_handle,
    const DAT_EP_ATTR *ep_attributes,
    DAT_EP_HANDLE *ep_handle);

DAT_EXPORT DAT_RETURN dat_ep_create_with_srq(
    DAT_IA_HANDLE ia_handle,
    DAT_PZ_HANDLE pz_handle,
    DAT_EVD_HANDLE recv_evd_handle,
    DAT_EVD_HANDLE request_evd_handle,
    DAT_EVD_HANDLE connect_evd_handle,
    DAT_SRQ_HANDLE srq_handle,
    const DAT_EP_ATTR *ep_attributes,
    DAT_EP_HANDLE *ep_handle);

DAT_EXPORT DAT_RETURN dat_ep_query(
    DAT_EP_HANDLE ep_handle,
    DAT_EP_PARAM_MASK ep_param_mask,
    DAT_EP_PARAM *ep_param);

DAT_EXPORT DAT_RETURN dat_ep_modify(
    DAT_EP_HANDLE ep_handle,
    DAT_EP_PARAM_MASK ep_param_mask,
    const DAT_EP_PARAM *ep_param);

DAT_EXPORT DAT_RETURN dat_ep_connect(
    DAT_EP_HANDLE ep_handle,
    DAT_IA_ADDRESS_PTR remote_ia_address,
    DAT_CONN_QUAL remote_conn_qual,
    DAT_TIMEOUT timeout,
    DAT_COUNT private_data_size,
    const DAT_PVOID private_data,
    DAT_QOS quality_of_service,
    DAT_CONNECT_FLAGS connect_flags);

DAT_EXPORT DAT_RETURN dat_ep_dup_connect(
    DAT_EP_HANDLE ep_handle,
    DAT_EP_HANDLE ep_dup_handle,
    DAT_TIMEOUT timeout,
    DAT_COUNT private_data_size,
    const DAT_PVOID private_data,
    DAT_QOS quality_of_service);

DAT_EXPORT DAT_RETURN dat_ep_common_connect(
    DAT_EP_HANDLE ep_handle,
    DAT_IA_ADDRESS_PTR remote_ia_address,
    DAT_TIMEOUT timeout,
    DAT_COUNT private_data_size,
    const DAT_PVOID private_data);

DAT_EXPORT DAT_RETURN dat_ep_disconnect(
    DAT_EP_HANDLE ep_handle,
    DAT_CLOSE_FLAGS close_flags);

DAT_EXPORT DAT_RETURN dat_ep_post_send(
    DAT_EP_HANDLE ep_handle,
    DAT_COUNT num_segments,
    DAT_LMR_TRIPLET *local_iov,
    DAT_DTO_COOKIE user_cookie,
    DAT_COMPLETION_FLAGS completion_flags);

DAT_EXPORT DAT_RETURN dat_ep_post_send_with_invalidate(
    DAT_EP_HANDLE ep_handle,
    DAT_COUNT num_segments,
    DAT_LMR_TRIPLET *local_iov,
    DAT_DTO_COOKIE user_cookie,
    DAT_COMPLETION_FLAGS completion_flags,
    DAT_BOOLEAN invalidate_flag,
    DAT_RMR_CONTEXT rmr_context);

DAT_EXPORT DAT_RETURN dat_ep_post_recv(
    DAT_EP_HANDLE ep_handle,
    DAT_COUNT num_segments,
    DAT_LMR_TRIPLET *local_iov,
    DAT_DTO_COOKIE user_cookie,
    DAT_COMPLETION_FLAGS completion_flags);

DAT_EXPORT DAT_RETURN dat_ep_post_rdma_read(
    DAT_EP_HANDLE ep_handle,
    DAT_COUNT num_segments,
    DAT_LMR_TRIPLET *local_iov,
    DAT_DTO_COOKIE user_cookie,
    const DAT_RMR_TRIPLET *remote_iov,
    DAT_COMPLETION_FLAGS completion_flags);

DAT_EXPORT DAT_RETURN dat_ep_post_rdma_read_to_rmr(
    DAT_EP_HANDLE ep_handle,
    const DAT_RMR_TRIPLET *local_iov,
    DAT_DTO_COOKIE user_cookie,
    const DAT_RMR_TRIPLET *remote_iov,
    DAT_COMPLETION_FLAGS completion_flags);

DAT_EXPORT DAT_RETURN dat_ep_post_rdma_write(
    DAT_EP_HANDLE ep_handle,
    DAT_COUNT num_segments,
    DAT_LMR_TRIPLET *local_iov,
    DAT_DTO_COOKIE user_cookie,
    const DAT_RMR_TRIPLET *remote_iov,
    DAT_COMPLETION_FLAGS completion_flags);

DAT_EXPORT DAT_RETURN dat_ep_get_status(
    DAT_EP_HANDLE ep_handle,
    DAT_EP_STATE *ep_state,
    DAT_BOOLEAN *recv_idle,
    DAT_BOOLEAN *request_idle);

DAT_EXPORT DAT_RETURN dat_ep_free(
    DAT_EP_HANDLE ep_handle);

DAT_EXPORT DAT_RETURN dat_ep_reset(
    DAT_EP_HANDLE ep_handle);

DAT_EXPORT DAT_RETURN dat_ep_recv_query(
    DAT_EP_HANDLE ep_handle,
    DAT_COUNT *nbufs_allocated,
    DAT_COUNT *bufs_alloc_span);

DAT_EXPORT DAT_RETURN dat_ep_set_watermark(
    DAT_EP_HANDLE ep_handle,
    DAT_COUNT soft_high_watermark,
    DAT_COUNT hard_high_watermark);

/* Local memory regions (creation is in udat.h) */
DAT_EXPORT DAT_RETURN dat_lmr_query(
    DAT_LMR_HANDLE lmr_handle,
    DAT_LMR_PARAM_MASK lmr_param_mask,
    DAT_LMR_PARAM *lmr_param);

DAT_EXPORT DAT_RETURN dat_lmr_free(
    DAT_LMR_HANDLE lmr_handle);

DAT_EXPORT DAT_RETURN dat_lmr_sync_rdma_read(
    DAT_IA_HANDLE ia_handle,
    const DAT_LMR_TRIPLET *local_segments,
    DAT_VLEN num_segments);

DAT_EXPORT DAT_RETURN dat_lmr_sync_rdma_write(
    DAT_IA_HANDLE ia_handle,
    const DAT_LMR_TRIPLET *local_segments,
    DAT_VLEN num_segments);

/* Remote memory regions */
DAT_EXPORT DAT_RETURN dat_rmr_create(
    DAT_PZ_HANDLE pz_handle,
    DAT_RMR_HANDLE *rmr_handle);

DAT_EXPORT DAT_RETURN dat_rmr_create_for_ep(
    DAT_PZ_HANDLE pz_handle,
    DAT_RMR_HANDLE *rmr_handle);

DAT_EXPORT DAT_RETURN dat_rmr_query(
    DAT_RMR_HANDLE rmr_handle,
    DAT_RMR_PARAM_MASK rmr_param_mask,
    DAT_RMR_PARAM *rmr_param);

DAT_EXPORT DAT_RETURN dat_rmr_bind(
    DAT_RMR_HANDLE rmr_handle,
    DAT_LMR_HANDLE lmr_handle,
    const DAT_LMR_TRIPLET *lmr_triplet,
    DAT_MEM_PRIV_FLAGS mem_priv,
    DAT_VA_TYPE va_type,
    DAT_EP_HANDLE ep_handle,
    DAT_RMR_COOKIE user_cookie,
    DAT_COMPLETION_FLAGS completion_flags,
    DAT_RMR_CONTEXT *context);

DAT_EXPORT DAT_RETURN dat_rmr_free(
    DAT_RMR_HANDLE rmr_handle);

/* Public service points */
DAT_EXPORT DAT_RETURN dat_psp_create(
    DAT_IA_HANDLE ia_handle,
    DAT_CONN_QUAL conn_qual,
    DAT_EVD_HANDLE evd_handle,
    DAT_PSP_FLAGS psp_flags,
    DAT_PSP_HANDLE *psp_handle);

DAT_EXPORT DAT_RETURN dat_psp_create_any(
    DAT_IA_HANDLE ia_handle,
    DAT_CONN_QUAL *conn_qual,
    DAT_EVD_HANDLE evd_handle,
    DAT_PSP_FLAGS psp_flags,
    DAT_PSP_HANDLE *psp_handle);

DAT_EXPORT DAT_RETURN dat_psp_query(
    DAT_PSP_HANDLE psp_handle,
    DAT_PSP_PARAM_MASK psp_param_mask,
    DAT_PSP_PARAM *psp_param);

DAT_EXPORT DAT_RETURN dat_psp_free(
    DAT_PSP_HANDLE psp_handle);

/* Reserved service points */
DAT_EXPORT DAT_RETURN dat_rsp_create(
    DAT_IA_HANDLE ia_handle,
    DAT_CONN_QUAL conn_qual,
    DAT_EP_HANDLE ep_handle,
    DAT_EVD_HANDLE evd_handle,
    DAT_RSP_HANDLE *rsp_handle);

DAT_EXPORT DAT_RETURN dat_rsp_query(
    DAT_RSP_HANDLE rsp_handle,
    DAT_RSP_PARAM_MASK rsp_param_mask,
    DAT_RSP_PARAM *rsp_param);

DAT_EXPORT DAT_RETURN dat_rsp_free(
    DAT_RSP_HANDLE rsp_handle);

/* Common service points */
DAT_EXPORT DAT_RETURN dat_csp_create(
    DAT_IA_HANDLE ia_handle,
    DAT_COMM *comm,
    DAT_IA_ADDRESS_PTR address,
    DAT_EVD_HANDLE evd_handle,
    DAT_CSP_HANDLE *csp_handle);

DAT_EXPORT DAT_RETURN dat_csp_query(
    DAT_CSP_HANDLE csp_handle,
    DAT_CSP_PARAM_MASK csp_param_mask,
    DAT_CSP_PARAM *csp_param);

DAT_EXPORT DAT_RETURN dat_csp_free(
    DAT_CSP_HANDLE csp_handle);

/* Protection zones */
DAT_EXPORT DAT_RETURN dat_pz_create(
    DAT_IA_HANDLE ia_handle,
    DAT_PZ_HANDLE *pz_handle);

DAT_EXPORT DAT_RETURN dat_pz_query(
    DAT_PZ_HANDLE pz_handle,
    DAT_PZ_PARAM_MASK pz_param_mask,
    DAT_PZ_PARAM *pz_param);

DAT_EXPORT DAT_RETURN dat_pz_free(
    DAT_PZ_HANDLE pz_handle);

/* Shared receive queues */
DAT_EXPORT DAT_RETURN dat_srq_create(
    DAT_IA_HANDLE ia_handle,
    DAT_PZ_HANDLE pz_handle,
    DAT_SRQ_ATTR *srq_attr,
    DAT_SRQ_HANDLE *srq_handle);

DAT_EXPORT DAT_RETURN dat_srq_free(
    DAT_SRQ_HANDLE srq_handle);

DAT_EXPORT DAT_RETURN dat_srq_post_recv(
    DAT_SRQ_HANDLE srq_handle,
    DAT_COUNT num_segments,
    DAT_LMR_TRIPLET *local_iov,
    DAT_DTO_COOKIE user_cookie);

DAT_EXPORT DAT_RETURN dat_srq_query(
    DAT_SRQ_HANDLE srq_handle,
    DAT_SRQ_PARAM_MASK srq_param_mask,
    DAT_SRQ_PARAM *srq_param);

DAT_EXPORT DAT_RETURN dat_srq_resize(
    DAT_SRQ_HANDLE srq_handle,
    DAT_COUNT srq_max_recv_dto);

DAT_EXPORT DAT_RETURN dat_srq_set_lw(
    DAT_SRQ_HANDLE srq_handle,
    DAT_COUNT low_watermark);

#ifdef DAT_EXTENSIONS
/*
 * Extensions: dat_extension_op(handle, op, ...) runs a provider extension
 * operation; the IB operations and their arguments are in
 * <dat2/dat_ib_extensions.h>.  Operation codes with one of these bits set
 * open or close an extension by name.
 */
#define DAT_OPEN_EXTENSION_BASE     0x1000
#define DAT_CLOSE_EXTENSION_BASE    0x2000

typedef int                 DAT_EXTENDED_OP;

DAT_EXPORT DAT_RETURN dat_extension_op(
    DAT_HANDLE handle,
    DAT_EXTENDED_OP ext_op,
    ...);
#endif

/* Registry and error text */
DAT_EXPORT DAT_RETURN dat_registry_list_providers(
    DAT_COUNT max_to_return,
    DAT_COUNT *entries_returned,
    DAT_PROVIDER_INFO *dat_provider_list[]);

DAT_EXPORT DAT_RETURN dat_strerror(
    DAT_RETURN value,
    const char **major_message,
    const char **minor_message);
#ifdef __cplusplus
}
#endif

#endif /* _DAT_H_ */
