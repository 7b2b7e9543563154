/*
 * dat2/dat_ib_extensions.h - the InfiniBand extensions of DAT 2.0 (OFED
 * dapl 2.x, extension version 2.0.9).
 *
 * Operations a DAT 2.0 IA offers beyond the standard calls when
 * dat_ia_query() reports extension_supported == DAT_EXTENSION_IB: atomic
 * fetch-and-add and compare-and-swap, RDMA write with immediate data,
 * unreliable datagram (UD) endpoints, counters, and collectives.  Every
 * dat_ib_*() below is a macro over the variadic dat_extension_op(handle, op,
 * ...), which passes the arguments, converted to the types shown, to the
 * provider.  Their completions arrive as DAT_IB_DTO_EVENT (and the other
 * DAT_IB_*_EVENT numbers) with a DAT_IB_EXTENSION_EVENT_DATA in the event's
 * event_extension_data.
 *
 * Consumers include it after <dat2/udat.h> (it includes that header itself).
 */
#ifndef _DAT_IB_EXTENSIONS_H_
#define _DAT_IB_EXTENSIONS_H_

#include <dat2/udat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Extension version: 2.0.9, reported in DAT_IA_ATTR.extension_version. */
#define DAT_IB_EXTENSION_VERSION        209

/* Names of provider-specific attributes that announce each capability. */
#define DAT_IB_ATTR_COUNTERS            "DAT_COUNTERS"
#define DAT_IB_ATTR_FETCH_AND_ADD       "DAT_IB_FETCH_AND_ADD"
#define DAT_IB_ATTR_CMP_AND_SWAP        "DAT_IB_CMP_AND_SWAP"
#define DAT_IB_ATTR_IMMED_DATA          "DAT_IB_IMMED_DATA"
#define DAT_IB_ATTR_UD                  "DAT_IB_UD"
#define DAT_IB_COLL_SET_CLOCK           "DAT_COLL_SET_CLOCK"
#define DAT_IB_COLL_READ_CLOCK          "DAT_COLL_READ_CLOCK"
#define DAT_IB_COLL_BROADCAST           "DAT_COLL_BROADCAST"
#define DAT_IB_COLL_BARRIER             "DAT_COLL_BARRIER"
#define DAT_IB_COLL_SCATTER             "DAT_COLL_SCATTER"
#define DAT_IB_COLL_SCATTERV            "DAT_COLL_SCATTERV"
#define DAT_IB_COLL_GATHER              "DAT_COLL_GATHER"
#define DAT_IB_COLL_GATHERV             "DAT_COLL_GATHERV"
#define DAT_IB_COLL_ALLGATHER           "DAT_COLL_ALLGATHER"
#define DAT_IB_COLL_ALLGATHERV          "DAT_COLL_ALLGATHERV"
#define DAT_IB_COLL_ALLTOALL            "DAT_COLL_ALLTOALL"
#define DAT_IB_COLL_ALLTOALLV           "DAT_COLL_ALLTOALLV"
#define DAT_IB_COLL_REDUCE              "DAT_COLL_REDUCE"
#define DAT_IB_COLL_ALLREDUCE           "DAT_COLL_ALLREDUCE"
#define DAT_IB_COLL_REDUCE_SCATTER      "DAT_COLL_REDUCE_SCATTER"
#define DAT_IB_COLL_SCAN                "DAT_COLL_SCAN"

/* A collective group (dat_ib_collective_create_group). */
typedef DAT_HANDLE          DAT_IB_COLLECTIVE_HANDLE;

/* Event numbers of IB extension completions (DAT_EVENT.event_number). */
typedef enum dat_ib_event_number
{
    DAT_IB_DTO_EVENT                       = DAT_IB_EXTENSION_RANGE_BASE,
    DAT_IB_UD_CONNECTION_REQUEST_EVENT     = 0x40001,
    DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED = 0x40002,
    DAT_IB_UD_CONNECTION_REJECT_EVENT      = 0x40003,
    DAT_IB_UD_CONNECTION_ERROR_EVENT       = 0x40004,
    DAT_IB_COLLECTIVE_EVENT                = 0x40005
} DAT_IB_EVENT_NUMBER;

/* Operation codes: the second argument of dat_extension_op(). */
typedef enum dat_ib_op
{
    DAT_IB_FETCH_AND_ADD_OP             = 0x00,
    DAT_IB_CMP_AND_SWAP_OP              = 0x01,
    DAT_IB_RDMA_WRITE_IMMED_OP          = 0x02,
    DAT_IB_UD_SEND_OP                   = 0x03,
    DAT_IB_QUERY_COUNTERS_OP            = 0x04,
    DAT_IB_PRINT_COUNTERS_OP            = 0x05,
    DAT_IB_COLLECTIVE_CREATE_MEMBER_OP  = 0x06,
    DAT_IB_COLLECTIVE_FREE_MEMBER_OP    = 0x07,
    DAT_IB_COLLECTIVE_CREATE_GROUP_OP   = 0x08,
    DAT_IB_COLLECTIVE_FREE_GROUP_OP     = 0x09,
    DAT_IB_COLLECTIVE_SET_CLOCK_OP      = 0x0a,
    DAT_IB_COLLECTIVE_READ_CLOCK_OP     = 0x0b,
    DAT_IB_COLLECTIVE_SCATTER_OP        = 0x0c,
    DAT_IB_COLLECTIVE_SCATTERV_OP       = 0x0d,
    DAT_IB_COLLECTIVE_GATHER_OP         = 0x0e,
    DAT_IB_COLLECTIVE_GATHERV_OP        = 0x0f,
    DAT_IB_COLLECTIVE_ALLGATHER_OP      = 0x10,
    DAT_IB_COLLECTIVE_ALLGATHERV_OP     = 0x11,
    DAT_IB_COLLECTIVE_ALLTOALL_OP       = 0x12,
    DAT_IB_COLLECTIVE_ALLTOALLV_OP      = 0x13,
    DAT_IB_COLLECTIVE_REDUCE_OP         = 0x14,
    DAT_IB_COLLECTIVE_ALLREDUCE_OP      = 0x15,
    DAT_IB_COLLECTIVE_REDUCE_SCATTER_OP = 0x16,
    DAT_IB_COLLECTIVE_SCAN_OP           = 0x17,
    DAT_IB_COLLECTIVE_BROADCAST_OP      = 0x18,
    DAT_IB_COLLECTIVE_BARRIER_OP        = 0x19,
    DAT_IB_START_COUNTERS_OP            = 0x1a,
    DAT_IB_STOP_COUNTERS_OP             = 0x1b,
    DAT_IB_UD_CM_FREE_OP                = 0x1c,
    DAT_IB_UD_AH_FREE_OP                = 0x1d,
    DAT_IB_OPEN_QUERY_OP                = DAT_OPEN_EXTENSION_BASE,
    DAT_IB_CLOSE_QUERY_OP               = DAT_CLOSE_EXTENSION_BASE
} DAT_IB_OP;

/* What a DAT_IB_EXTENSION_EVENT_DATA reports (its type member). */
typedef enum dat_ib_ext_type
{
    DAT_IB_FETCH_AND_ADD                    = 0x00,
    DAT_IB_CMP_AND_SWAP                     = 0x01,
    DAT_IB_RDMA_WRITE_IMMED                 = 0x02,
    DAT_IB_RDMA_WRITE_IMMED_DATA            = 0x03,
    DAT_IB_RECV_IMMED_DATA                  = 0x04,
    DAT_IB_UD_CONNECT_REQUEST               = 0x05,
    DAT_IB_UD_REMOTE_AH                     = 0x06,
    DAT_IB_UD_PASSIVE_REMOTE_AH             = 0x07,
    DAT_IB_UD_SEND                          = 0x08,
    DAT_IB_UD_RECV                          = 0x09,
    DAT_IB_UD_CONNECT_REJECT                = 0x0a,
    DAT_IB_UD_CONNECT_ERROR                 = 0x0b,
    DAT_IB_COLLECTIVE_CREATE_STATUS         = 0x0c,
    DAT_IB_COLLECTIVE_CREATE_DATA           = 0x0d,
    DAT_IB_COLLECTIVE_CLOCK_SET_STATUS      = 0x0e,
    DAT_IB_COLLECTIVE_SCATTER_STATUS        = 0x0f,
    DAT_IB_COLLECTIVE_SCATTERV_STATUS       = 0x10,
    DAT_IB_COLLECTIVE_GATHER_STATUS         = 0x11,
    DAT_IB_COLLECTIVE_GATHERV_STATUS        = 0x12,
    DAT_IB_COLLECTIVE_ALLGATHER_STATUS      = 0x13,
    DAT_IB_COLLECTIVE_ALLGATHERV_STATUS     = 0x14,
    DAT_IB_COLLECTIVE_ALLTOALL_STATUS       = 0x15,
    DAT_IB_COLLECTIVE_ALLTOALLV_STATUS      = 0x16,
    DAT_IB_COLLECTIVE_REDUCE_STATUS         = 0x17,
    DAT_IB_COLLECTIVE_ALLREDUCE_STATUS      = 0x18,
    DAT_IB_COLLECTIVE_REDUCE_SCATTER_STATUS = 0x19,
    DAT_IB_COLLECTIVE_SCAN_STATUS           = 0x1a,
    DAT_IB_COLLECTIVE_BROADCAST_STATUS      = 0x1b,
    DAT_IB_COLLECTIVE_BARRIER_STATUS        = 0x1c
} DAT_IB_EXT_TYPE;

/* Status of an extension operation (DAT_IB_EXTENSION_EVENT_DATA.status). */
typedef enum dat_ib_status
{
    DAT_OP_SUCCESS       = DAT_SUCCESS,
    DAT_IB_OP_ERR        = 0x01,
    DAT_IB_COLL_COMP_ERR = 0x02
} DAT_IB_STATUS;

/* Return type codes of extension operations (DAT_GET_TYPE of a DAT_RETURN). */
typedef enum dat_ib_return
{
    DAT_IB_ERR            = DAT_EXTENSION_BASE,
    DAT_IB_COLLECTIVE_ERR = 0x10000001
} DAT_IB_RETURN;

/* Extension operations in DAT_DTO_COMPLETION_EVENT_DATA.operation. */
typedef enum dat_ib_dtos
{
    DAT_IB_DTO_RDMA_WRITE_IMMED = DAT_DTO_EXTENSION_BASE,
    DAT_IB_DTO_RECV_IMMED       = 0x09,
    DAT_IB_DTO_FETCH_ADD        = 0x0a,
    DAT_IB_DTO_CMP_SWAP         = 0x0b,
    DAT_IB_DTO_RECV_MSG_IMMED   = 0x0c,
    DAT_IB_DTO_SEND_UD          = 0x0d,
    DAT_IB_DTO_RECV_UD          = 0x0e,
    DAT_IB_DTO_RECV_UD_IMMED    = 0x0f,
    DAT_IB_DTO_COLLECTIVES      = 0x10
} DAT_IB_DTOS;

/* Handle types of extension objects (dat_get_handle_type). */
typedef enum dat_ib_handle_type
{
    DAT_IB_HANDLE_TYPE_EXT        = DAT_HANDLE_TYPE_EXTENSION_BASE,
    DAT_IB_HANDLE_TYPE_COLLECTIVE = 0x0d
} DAT_IB_HANDLE_TYPE;

/* EVD flag: the EVD receives extension completions. */
typedef enum dat_ib_evd_extension_flags
{
    DAT_IB_EVD_EXTENSION_FLAG = DAT_EVD_EXTENSION_BASE
} DAT_IB_EVD_EXTENSION_FLAGS;

/* Memory privilege: remote atomic operations on the region. */
typedef enum dat_ib_mem_priv_flags
{
    DAT_IB_MEM_PRIV_REMOTE_ATOMIC = DAT_MEM_PRIV_EXTENSION_BASE
} DAT_IB_MEM_PRIV_FLAGS;

/* Endpoint service type: unreliable datagram. */
typedef enum dat_ib_service_type
{
    DAT_IB_SERVICE_TYPE_UD = DAT_SERVICE_TYPE_EXTENSION_BASE
} DAT_IB_SERVICE_TYPE;

/* libibverbs' address handle; only pointers to it appear here. */
struct ibv_ah;

/* Where a UD send goes: address handle, remote QP number, remote address. */
typedef struct dat_ib_addr_handle
{
    struct ibv_ah *         ah;
    DAT_UINT32              qpn;
    DAT_SOCK_ADDR6          ia_addr;
} DAT_IB_ADDR_HANDLE;

/* Immediate data of an RDMA write with immediate. */
typedef struct dat_ib_immed_data
{
    DAT_UINT32              data;
} DAT_IB_IMMED_DATA;

typedef struct dat_ib_collective_event_data
{
    DAT_HANDLE              handle;
    DAT_CONTEXT             context;
} DAT_IB_COLLECTIVE_EVENT_DATA;

/*
 * The extension part of an event: DAT_EVENT.event_extension_data, read as
 * this structure.  Its second union has no name (as in OFED's header, so
 * consumers write data->remote_ah); __extension__ keeps GCC and Clang quiet
 * about that in C99 -pedantic builds.
 */
typedef struct dat_ib_extension_event_data
{
    DAT_IB_EXT_TYPE         type;
    DAT_IB_STATUS           status;
    union
    {
        DAT_IB_IMMED_DATA   immed;
    } val;
#if defined(__GNUC__)
    __extension__
#endif
    union
    {
        DAT_IB_ADDR_HANDLE  remote_ah;
        DAT_IB_COLLECTIVE_EVENT_DATA coll;
    };
    DAT_CONTEXT             context;
} DAT_IB_EXTENSION_EVENT_DATA;

/* ------------------------------------------------------------------ */
/* Counters                                                            */
/* ------------------------------------------------------------------ */

/* Counters of an IA (dat_ib_query_counters on an IA handle). */
typedef enum dat_ia_counters
{
    DCNT_IA_PZ_CREATE               = 0x00,
    DCNT_IA_PZ_FREE                 = 0x01,
    DCNT_IA_LMR_CREATE              = 0x02,
    DCNT_IA_LMR_FREE                = 0x03,
    DCNT_IA_RMR_CREATE              = 0x04,
    DCNT_IA_RMR_FREE                = 0x05,
    DCNT_IA_PSP_CREATE              = 0x06,
    DCNT_IA_PSP_CREATE_ANY          = 0x07,
    DCNT_IA_PSP_FREE                = 0x08,
    DCNT_IA_RSP_CREATE              = 0x09,
    DCNT_IA_RSP_FREE                = 0x0a,
    DCNT_IA_EVD_CREATE              = 0x0b,
    DCNT_IA_EVD_FREE                = 0x0c,
    DCNT_IA_EP_CREATE               = 0x0d,
    DCNT_IA_EP_FREE                 = 0x0e,
    DCNT_IA_SRQ_CREATE              = 0x0f,
    DCNT_IA_SRQ_FREE                = 0x10,
    DCNT_IA_SP_CR                   = 0x11,
    DCNT_IA_SP_CR_ACCEPTED          = 0x12,
    DCNT_IA_SP_CR_REJECTED          = 0x13,
    DCNT_IA_MEM_ALLOC               = 0x14,
    DCNT_IA_MEM_ALLOC_DATA          = 0x15,
    DCNT_IA_MEM_FREE                = 0x16,
    DCNT_IA_ASYNC_ERROR             = 0x17,
    DCNT_IA_ASYNC_QP_ERROR          = 0x18,
    DCNT_IA_ASYNC_CQ_ERROR          = 0x19,
    DCNT_IA_CM_LISTEN               = 0x1a,
    DCNT_IA_CM_REQ_TX               = 0x1b,
    DCNT_IA_CM_REQ_RX               = 0x1c,
    DCNT_IA_CM_REP_TX               = 0x1d,
    DCNT_IA_CM_REP_RX               = 0x1e,
    DCNT_IA_CM_RTU_TX               = 0x1f,
    DCNT_IA_CM_RTU_RX               = 0x20,
    DCNT_IA_CM_USER_REJ_TX          = 0x21,
    DCNT_IA_CM_USER_REJ_RX          = 0x22,
    DCNT_IA_CM_ACTIVE_EST           = 0x23,
    DCNT_IA_CM_PASSIVE_EST          = 0x24,
    DCNT_IA_CM_AH_REQ_TX            = 0x25,
    DCNT_IA_CM_AH_REQ_RX            = 0x26,
    DCNT_IA_CM_AH_RESOLVED          = 0x27,
    DCNT_IA_CM_DREQ_TX              = 0x28,
    DCNT_IA_CM_DREQ_RX              = 0x29,
    DCNT_IA_CM_DREP_TX              = 0x2a,
    DCNT_IA_CM_DREP_RX              = 0x2b,
    DCNT_IA_CM_MRA_TX               = 0x2c,
    DCNT_IA_CM_MRA_RX               = 0x2d,
    DCNT_IA_CM_REQ_FULLQ_POLL       = 0x2e,
    DCNT_IA_CM_ERR                  = 0x2f,
    DCNT_IA_CM_ERR_REQ_FULLQ        = 0x30,
    DCNT_IA_CM_ERR_REQ_DUP          = 0x31,
    DCNT_IA_CM_ERR_REQ_RETRY        = 0x32,
    DCNT_IA_CM_ERR_REP_DUP          = 0x33,
    DCNT_IA_CM_ERR_REP_RETRY        = 0x34,
    DCNT_IA_CM_ERR_RTU_DUP          = 0x35,
    DCNT_IA_CM_ERR_RTU_RETRY        = 0x36,
    DCNT_IA_CM_ERR_REFUSED          = 0x37,
    DCNT_IA_CM_ERR_RESET            = 0x38,
    DCNT_IA_CM_ERR_TIMEOUT          = 0x39,
    DCNT_IA_CM_ERR_REJ_TX           = 0x3a,
    DCNT_IA_CM_ERR_REJ_RX           = 0x3b,
    DCNT_IA_CM_ERR_DREQ_DUP         = 0x3c,
    DCNT_IA_CM_ERR_DREQ_RETRY       = 0x3d,
    DCNT_IA_CM_ERR_DREP_DUP         = 0x3e,
    DCNT_IA_CM_ERR_DREP_RETRY       = 0x3f,
    DCNT_IA_CM_ERR_MRA_DUP          = 0x40,
    DCNT_IA_CM_ERR_MRA_RETRY        = 0x41,
    DCNT_IA_CM_ERR_UNEXPECTED       = 0x42,
    DCNT_IA_LNK_ERR_RCV             = 0x43,
    DCNT_IA_LNK_ERR_RCV_REM_PHYS    = 0x44,
    DCNT_IA_LNK_ERR_RCV_CONSTRAINT  = 0x45,
    DCNT_IA_LNK_ERR_XMT_DISCARDS    = 0x46,
    DCNT_IA_LNK_ERR_XMT_CONTRAINT   = 0x47,
    DCNT_IA_LNK_ERR_INTEGRITY       = 0x48,
    DCNT_IA_LNK_ERR_EXC_BUF_OVERRUN = 0x49,
    DCNT_IA_LNK_WARN_RCV_SW_RELAY   = 0x4a,
    DCNT_IA_LNK_WARN_XMT_WAIT       = 0x4b,
    DCNT_IA_DIAG_ERR_RQ_RAE         = 0x4c,
    DCNT_IA_DIAG_ERR_RQ_OOS         = 0x4d,
    DCNT_IA_DIAG_ERR_RQ_RIRE        = 0x4e,
    DCNT_IA_DIAG_ERR_RQ_UDSDPRD     = 0x4f,
    DCNT_IA_DIAG_ERR_SQ_RAE         = 0x50,
    DCNT_IA_DIAG_ERR_SQ_OOS         = 0x51,
    DCNT_IA_DIAG_ERR_SQ_RIRE        = 0x52,
    DCNT_IA_DIAG_ERR_SQ_RREE        = 0x53,
    DCNT_IA_DIAG_ERR_SQ_TREE        = 0x54,
    DCNT_IA_ALL_COUNTERS            = 0x55
} DAT_IA_COUNTERS;

/* Counters of an EP. */
typedef enum dat_ep_counters
{
    DCNT_EP_CONNECT             = 0x00,
    DCNT_EP_DISCONNECT          = 0x01,
    DCNT_EP_POST_SEND           = 0x02,
    DCNT_EP_POST_SEND_DATA      = 0x03,
    DCNT_EP_POST_SEND_UD        = 0x04,
    DCNT_EP_POST_SEND_UD_DATA   = 0x05,
    DCNT_EP_POST_RECV           = 0x06,
    DCNT_EP_POST_RECV_DATA      = 0x07,
    DCNT_EP_POST_WRITE          = 0x08,
    DCNT_EP_POST_WRITE_DATA     = 0x09,
    DCNT_EP_POST_WRITE_IMM      = 0x0a,
    DCNT_EP_POST_WRITE_IMM_DATA = 0x0b,
    DCNT_EP_POST_READ           = 0x0c,
    DCNT_EP_POST_READ_DATA      = 0x0d,
    DCNT_EP_POST_CMP_SWAP       = 0x0e,
    DCNT_EP_POST_FETCH_ADD      = 0x0f,
    DCNT_EP_RECV                = 0x10,
    DCNT_EP_RECV_DATA           = 0x11,
    DCNT_EP_RECV_UD             = 0x12,
    DCNT_EP_RECV_UD_DATA        = 0x13,
    DCNT_EP_RECV_IMM            = 0x14,
    DCNT_EP_RECV_IMM_DATA       = 0x15,
    DCNT_EP_RECV_RDMA_IMM       = 0x16,
    DCNT_EP_RECV_RDMA_IMM_DATA  = 0x17,
    DCNT_EP_ALL_COUNTERS        = 0x18
} DAT_EP_COUNTERS;

/* Counters of an EVD. */
typedef enum dat_evd_counters
{
    DCNT_EVD_WAIT               = 0x00,
    DCNT_EVD_WAIT_BLOCKED       = 0x01,
    DCNT_EVD_WAIT_NOTIFY        = 0x02,
    DCNT_EVD_DEQUEUE            = 0x03,
    DCNT_EVD_DEQUEUE_FOUND      = 0x04,
    DCNT_EVD_DEQUEUE_NOT_FOUND  = 0x05,
    DCNT_EVD_DEQUEUE_POLL       = 0x06,
    DCNT_EVD_DEQUEUE_POLL_FOUND = 0x07,
    DCNT_EVD_CONN_CALLBACK      = 0x08,
    DCNT_EVD_DTO_CALLBACK       = 0x09,
    DCNT_EVD_ALL_COUNTERS       = 0x0a
} DAT_EVD_COUNTERS;

/* Groups of IA counters to start or stop. */
typedef enum dat_ia_counter_type
{
    DCNT_IA_CM   = 0x00,
    DCNT_IA_LNK  = 0x01,
    DCNT_IA_DIAG = 0x02
} DAT_IA_COUNTER_TYPE;

/* ------------------------------------------------------------------ */
/* Collectives                                                         */
/* ------------------------------------------------------------------ */

/* Element types of reductions. */
typedef enum dat_ib_collective_data_type
{
    DAT_IB_COLLECTIVE_TYPE_INT8        = 0x00,
    DAT_IB_COLLECTIVE_TYPE_UINT8       = 0x01,
    DAT_IB_COLLECTIVE_TYPE_INT16       = 0x02,
    DAT_IB_COLLECTIVE_TYPE_UINT16      = 0x03,
    DAT_IB_COLLECTIVE_TYPE_INT32       = 0x04,
    DAT_IB_COLLECTIVE_TYPE_UINT32      = 0x05,
    DAT_IB_COLLECTIVE_TYPE_INT64       = 0x06,
    DAT_IB_COLLECTIVE_TYPE_UINT64      = 0x07,
    DAT_IB_COLLECTIVE_TYPE_FLOAT       = 0x08,
    DAT_IB_COLLECTIVE_TYPE_DOUBLE      = 0x09,
    DAT_IB_COLLECTIVE_TYPE_LONG_DOUBLE = 0x0a,
    DAT_IB_COLLECTIVE_TYPE_SHORT_INT   = 0x0b,
    DAT_IB_COLLECTIVE_TYPE_2INT        = 0x0c,
    DAT_IB_COLLECTIVE_TYPE_FLOAT_INT   = 0x0d,
    DAT_IB_COLLECTIVE_TYPE_LONG_INT    = 0x0e,
    DAT_IB_COLLECTIVE_TYPE_DOUBLE_INT  = 0x0f
} DAT_IB_COLLECTIVE_DATA_TYPE;

/* Reduction operators. */
typedef enum dat_ib_collective_reduce_data_op
{
    DAT_IB_COLLECTIVE_REDUCE_OP_MAX    = 0x00,
    DAT_IB_COLLECTIVE_REDUCE_OP_MIN    = 0x01,
    DAT_IB_COLLECTIVE_REDUCE_OP_SUM    = 0x02,
    DAT_IB_COLLECTIVE_REDUCE_OP_PROD   = 0x03,
    DAT_IB_COLLECTIVE_REDUCE_OP_LAND   = 0x04,
    DAT_IB_COLLECTIVE_REDUCE_OP_BAND   = 0x05,
    DAT_IB_COLLECTIVE_REDUCE_OP_LOR    = 0x06,
    DAT_IB_COLLECTIVE_REDUCE_OP_BOR    = 0x07,
    DAT_IB_COLLECTIVE_REDUCE_OP_LXOR   = 0x08,
    DAT_IB_COLLECTIVE_REDUCE_OP_BXOR   = 0x09,
    DAT_IB_COLLECTIVE_REDUCE_OP_MAXLOC = 0x0a,
    DAT_IB_COLLECTIVE_REDUCE_OP_MINLOC = 0x0b
} DAT_IB_COLLECTIVE_REDUCE_DATA_OP;

typedef unsigned int        DAT_IB_COLLECTIVE_RANK;
typedef unsigned int        DAT_IB_COLLECTIVE_ID;
typedef void *              DAT_IB_COLLECTIVE_MEMBER;

/* Placement of the group's ranks on nodes. */
typedef struct dat_ib_collective_group
{
    int                     local_size;
    int                     local_rank;
    int *                   local_ranks;
    int                     external_size;
    int                     external_rank;
    int *                   external_ranks;
    int *                   intranode_table;
    int *                   internode_table;
    int                     is_comm_world;
} DAT_IB_COLLECTIVE_GROUP;

/* ------------------------------------------------------------------ */
/* Error text                                                          */
/* ------------------------------------------------------------------ */

/* Text of an extension return code; other codes go to dat_strerror(). */
static __inline__ DAT_RETURN dat_strerror_extension(
    DAT_IB_RETURN value,
    const char **message)
{
    if (DAT_GET_TYPE(value) == (DAT_UINT32) DAT_IB_ERR) {
        *message = "DAT_IB_ERR";
        return DAT_SUCCESS;
    }
    return dat_strerror((DAT_RETURN) value, message, NULL);
}

/* Text of an extension status (" " for success, as in OFED's header). */
static __inline__ DAT_RETURN dat_strerror_ext_status(
    DAT_IB_STATUS value,
    const char **message)
{
    if (value == DAT_OP_SUCCESS) {
        *message = " ";
        return DAT_SUCCESS;
    }
    if (value == DAT_IB_OP_ERR) {
        *message = "DAT_IB_OP_ERR";
        return DAT_SUCCESS;
    }
    *message = "unknown extension status";
    return DAT_INVALID_PARAMETER;
}

/* ------------------------------------------------------------------ */
/* Operations (macros over dat_extension_op)                           */
/* ------------------------------------------------------------------ */

/*
 * A DAT_CONTEXT argument.  As in OFED's macros it is cast to DAT_CONTEXT,
 * so GNU C consumers may pass a pointer or a 64-bit value (GCC's cast to a
 * union); __extension__ keeps that quiet in -pedantic builds.
 */
#if defined(__GNUC__) && !defined(__cplusplus)
#define DAT_IB_CONTEXT_ARG(x)   (__extension__ (DAT_CONTEXT) (x))
#else
#define DAT_IB_CONTEXT_ARG(x)   ((DAT_CONTEXT) (x))
#endif

/*
 * Atomically add add_val to the 64-bit word at rbuf; the old value lands in
 * lbuf.  cookie is the DAT_DTO_COOKIE of the completion.
 */
#define dat_ib_post_fetch_and_add(ep, add_val, lbuf, cookie, rbuf, flgs) \
    dat_extension_op((DAT_EP_HANDLE) (ep), (DAT_IB_OP) DAT_IB_FETCH_AND_ADD_OP, \
                     (DAT_UINT64) (add_val), (DAT_LMR_TRIPLET *) (lbuf), (cookie), \
                     (DAT_RMR_TRIPLET *) (rbuf), (DAT_COMPLETION_FLAGS) (flgs))

/* If the 64-bit word at rbuf equals cmp_val, store swap_val; old value to lbuf. */
#define dat_ib_post_cmp_and_swap(ep, cmp_val, swap_val, lbuf, cookie, rbuf, flgs) \
    dat_extension_op((DAT_EP_HANDLE) (ep), (DAT_IB_OP) DAT_IB_CMP_AND_SWAP_OP, \
                     (DAT_UINT64) (cmp_val), (DAT_UINT64) (swap_val), (DAT_LMR_TRIPLET *) (lbuf), \
                     (cookie), (DAT_RMR_TRIPLET *) (rbuf), (DAT_COMPLETION_FLAGS) (flgs))

/* RDMA write of size segments that also delivers idata to the peer. */
#define dat_ib_post_rdma_write_immed(ep, size, lbuf, cookie, rbuf, idata, flgs) \
    dat_extension_op((DAT_EP_HANDLE) (ep), (DAT_IB_OP) DAT_IB_RDMA_WRITE_IMMED_OP, \
                     (DAT_COUNT) (size), (DAT_LMR_TRIPLET *) (lbuf), (cookie), \
                     (DAT_RMR_TRIPLET *) (rbuf), (DAT_UINT32) (idata), (DAT_COMPLETION_FLAGS) (flgs))

/* Unreliable datagram send to the address handle ah_ptr. */
#define dat_ib_post_send_ud(ep, segments, lbuf, ah_ptr, cookie, flgs) \
    dat_extension_op((DAT_EP_HANDLE) (ep), (DAT_IB_OP) DAT_IB_UD_SEND_OP, \
                     (DAT_COUNT) (segments), (DAT_LMR_TRIPLET *) (lbuf), \
                     (DAT_IB_ADDR_HANDLE *) (ah_ptr), (cookie), (DAT_COMPLETION_FLAGS) (flgs))

/* A UD receive is an ordinary receive. */
#define dat_ib_post_recv_ud     dat_ep_post_recv

/* Release the connection state / address handle of a UD peer. */
#define dat_ib_ud_cm_free(ep, cm) \
    dat_extension_op((DAT_EP_HANDLE) (ep), (DAT_IB_OP) DAT_IB_UD_CM_FREE_OP, DAT_IB_CONTEXT_ARG(cm))

#define dat_ib_ud_ah_free(ep, ah) \
    dat_extension_op((DAT_EP_HANDLE) (ep), (DAT_IB_OP) DAT_IB_UD_AH_FREE_OP, (DAT_IB_ADDR_HANDLE *) (ah))

/* Read (and optionally reset) counter cntr, or all of them, of an IA, EP or EVD. */
#define dat_ib_query_counters(dat_handle, cntr, p_cntrs_out, reset) \
    dat_extension_op((DAT_HANDLE) (dat_handle), (DAT_IB_OP) DAT_IB_QUERY_COUNTERS_OP, \
                     (int) (cntr), (DAT_UINT64 *) (p_cntrs_out), (int) (reset))

#define dat_ib_print_counters(dat_handle, cntr, reset) \
    dat_extension_op((DAT_HANDLE) (dat_handle), (DAT_IB_OP) DAT_IB_PRINT_COUNTERS_OP, \
                     (int) (cntr), (int) (reset))

#define dat_ib_start_counter(dat_handle, type) \
    dat_extension_op((DAT_HANDLE) (dat_handle), (DAT_IB_OP) DAT_IB_START_COUNTERS_OP, \
                     (DAT_IA_COUNTER_TYPE) (type))

#define dat_ib_stop_counter(dat_handle, type) \
    dat_extension_op((DAT_HANDLE) (dat_handle), (DAT_IB_OP) DAT_IB_STOP_COUNTERS_OP, \
                     (DAT_IA_COUNTER_TYPE) (type))

/* Open an IA by name for queries only, and close it. */
#define dat_ib_open_query(name, ia_handle, ia_mask, ia_attr, prov_mask, prov_attr) \
    dat_extension_op((DAT_HANDLE) NULL, (DAT_IB_OP) DAT_IB_OPEN_QUERY_OP, \
                     (DAT_NAME_PTR) (name), (DAT_HANDLE *) (ia_handle), \
                     (DAT_IA_ATTR_MASK) (ia_mask), (DAT_IA_ATTR *) (ia_attr), \
                     (DAT_PROVIDER_ATTR_MASK) (prov_mask), (DAT_PROVIDER_ATTR *) (prov_attr))

#define dat_ib_close_query(ia_handle) \
    dat_extension_op((DAT_HANDLE) (ia_handle), (DAT_IB_OP) DAT_IB_CLOSE_QUERY_OP)

/* Collective members and groups. */
#define dat_ib_collective_create_member(ia_handle, progress_func, member, member_size) \
    dat_extension_op((DAT_IA_HANDLE) (ia_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_CREATE_MEMBER_OP, \
                     (void *) (progress_func), (DAT_IB_COLLECTIVE_MEMBER *) (member), \
                     (DAT_UINT32 *) (member_size))

#define dat_ib_collective_free_member(ia_handle, member) \
    dat_extension_op((DAT_IA_HANDLE) (ia_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_FREE_MEMBER_OP, \
                     (DAT_IB_COLLECTIVE_MEMBER) (member))

#define dat_ib_collective_create_group(members, group_size, self, group_id, group_info, evd, pd, user_context) \
    dat_extension_op((DAT_EVD_HANDLE) (evd), (DAT_IB_OP) DAT_IB_COLLECTIVE_CREATE_GROUP_OP, \
                     (DAT_IB_COLLECTIVE_MEMBER *) (members), (DAT_COUNT) (group_size), \
                     (DAT_IB_COLLECTIVE_RANK) (self), (DAT_IB_COLLECTIVE_ID) (group_id), \
                     (DAT_IB_COLLECTIVE_GROUP *) (group_info), (DAT_PZ_HANDLE) (pd), \
                     DAT_IB_CONTEXT_ARG(user_context))

#define dat_ib_collective_free_group(coll_handle) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_FREE_GROUP_OP)

/* Global clock of a group. */
#define dat_ib_collective_set_clock(coll_handle, clock_value, user_context) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_SET_CLOCK_OP, \
                     (DAT_UINT64) (clock_value), DAT_IB_CONTEXT_ARG(user_context))

#define dat_ib_collective_read_clock(coll_handle, clock_value) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_READ_CLOCK_OP, \
                     (DAT_UINT64 *) (clock_value))

/* Data movement among the members of a group (MPI-style). */
#define dat_ib_collective_scatter(coll_handle, sendbuf, sendsize, recvbuf, recvsize, root, user_context, flags) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_SCATTER_OP, \
                     (DAT_PVOID) (sendbuf), (DAT_COUNT) (sendsize), (DAT_PVOID) (recvbuf), \
                     (DAT_COUNT) (recvsize), (DAT_IB_COLLECTIVE_RANK) (root), \
                     DAT_IB_CONTEXT_ARG(user_context), (DAT_COMPLETION_FLAGS) (flags))

#define dat_ib_collective_scatterv(coll_handle, sendbuf, sendsizes, displs, recvbuf, recvsize, root, user_context, flags) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_SCATTERV_OP, \
                     (DAT_PVOID) (sendbuf), (DAT_COUNT *) (sendsizes), (DAT_COUNT *) (displs), \
                     (DAT_PVOID) (recvbuf), (DAT_COUNT) (recvsize), (DAT_IB_COLLECTIVE_RANK) (root), \
                     DAT_IB_CONTEXT_ARG(user_context), (DAT_COMPLETION_FLAGS) (flags))

#define dat_ib_collective_gather(coll_handle, sendbuf, sendsize, recvbuf, recvsize, root, user_context, flags) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_GATHER_OP, \
                     (DAT_PVOID) (sendbuf), (DAT_COUNT) (sendsize), (DAT_PVOID) (recvbuf), \
                     (DAT_COUNT) (recvsize), (DAT_IB_COLLECTIVE_RANK) (root), \
                     DAT_IB_CONTEXT_ARG(user_context), (DAT_COMPLETION_FLAGS) (flags))

#define dat_ib_collective_gatherv(coll_handle, sendbuf, sendsize, recvbufs, recvsizes, displs, root, user_context, flags) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_GATHERV_OP, \
                     (DAT_PVOID) (sendbuf), (DAT_COUNT) (sendsize), (DAT_PVOID) (recvbufs), \
                     (DAT_COUNT *) (recvsizes), (DAT_COUNT *) (displs), (DAT_IB_COLLECTIVE_RANK) (root), \
                     DAT_IB_CONTEXT_ARG(user_context), (DAT_COMPLETION_FLAGS) (flags))

#define dat_ib_collective_allgather(coll_handle, sendbuf, sendsize, recvbuf, recvsize, user_context, flags) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_ALLGATHER_OP, \
                     (DAT_PVOID) (sendbuf), (DAT_COUNT) (sendsize), (DAT_PVOID) (recvbuf), \
                     (DAT_COUNT) (recvsize), DAT_IB_CONTEXT_ARG(user_context), (DAT_COMPLETION_FLAGS) (flags))

#define dat_ib_collective_allgatherv(coll_handle, sendbuf, sendsize, recvbuf, recvsizes, displs, user_context, flags) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_ALLGATHERV_OP, \
                     (DAT_PVOID) (sendbuf), (DAT_COUNT) (sendsize), (DAT_PVOID) (recvbuf), \
                     (DAT_COUNT *) (recvsizes), (DAT_COUNT *) (displs), DAT_IB_CONTEXT_ARG(user_context), \
                     (DAT_COMPLETION_FLAGS) (flags))

#define dat_ib_collective_alltoall(coll_handle, sendbuf, sendsize, recvbuf, recvsize, user_context, flags) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_ALLTOALL_OP, \
                     (DAT_PVOID) (sendbuf), (DAT_COUNT) (sendsize), (DAT_PVOID) (recvbuf), \
                     (DAT_COUNT) (recvsize), DAT_IB_CONTEXT_ARG(user_context), (DAT_COMPLETION_FLAGS) (flags))

#define dat_ib_collective_alltoallv(coll_handle, sendbuf, sendsizes, senddispls, recvbuf, recvsizes, recvdispls, user_context, flags) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_ALLTOALLV_OP, \
                     (DAT_PVOID) (sendbuf), (DAT_COUNT *) (sendsizes), (DAT_COUNT *) (senddispls), \
                     (DAT_PVOID) (recvbuf), (DAT_COUNT *) (recvsizes), (DAT_COUNT *) (recvdispls), \
                     DAT_IB_CONTEXT_ARG(user_context), (DAT_COMPLETION_FLAGS) (flags))

#define dat_ib_collective_reduce(coll_handle, sendbuf, sendsize, recvbuf, recvsize, op, type, root, user_context, flags) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_REDUCE_OP, \
                     (DAT_PVOID) (sendbuf), (DAT_COUNT) (sendsize), (DAT_PVOID) (recvbuf), \
                     (DAT_COUNT) (recvsize), (DAT_IB_COLLECTIVE_REDUCE_DATA_OP) (op), \
                     (DAT_IB_COLLECTIVE_DATA_TYPE) (type), (DAT_IB_COLLECTIVE_RANK) (root), \
                     DAT_IB_CONTEXT_ARG(user_context), (DAT_COMPLETION_FLAGS) (flags))

#define dat_ib_collective_allreduce(coll_handle, sendbuf, sendsize, recvbuf, recvsize, op, type, user_context, flags) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_ALLREDUCE_OP, \
                     (DAT_PVOID) (sendbuf), (DAT_COUNT) (sendsize), (DAT_PVOID) (recvbuf), \
                     (DAT_COUNT) (recvsize), (DAT_IB_COLLECTIVE_REDUCE_DATA_OP) (op), \
                     (DAT_IB_COLLECTIVE_DATA_TYPE) (type), DAT_IB_CONTEXT_ARG(user_context), \
                     (DAT_COMPLETION_FLAGS) (flags))

#define dat_ib_collective_reduce_scatter(coll_handle, sendbuf, sendsize, recvbuf, recvsizes, op, type, user_context, flags) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_REDUCE_SCATTER_OP, \
                     (DAT_PVOID) (sendbuf), (DAT_COUNT) (sendsize), (DAT_PVOID) (recvbuf), \
                     (DAT_COUNT *) (recvsizes), (DAT_IB_COLLECTIVE_REDUCE_DATA_OP) (op), \
                     (DAT_IB_COLLECTIVE_DATA_TYPE) (type), DAT_IB_CONTEXT_ARG(user_context), \
                     (DAT_COMPLETION_FLAGS) (flags))

#define dat_ib_collective_scan(coll_handle, sendbuf, sendsize, recvbuf, recvsize, op, type, user_context, flags) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_SCAN_OP, \
                     (DAT_PVOID) (sendbuf), (DAT_COUNT) (sendsize), (DAT_PVOID) (recvbuf), \
                     (DAT_COUNT) (recvsize), (DAT_IB_COLLECTIVE_REDUCE_DATA_OP) (op), \
                     (DAT_IB_COLLECTIVE_DATA_TYPE) (type), DAT_IB_CONTEXT_ARG(user_context), \
                     (DAT_COMPLETION_FLAGS) (flags))

#define dat_ib_collective_broadcast(coll_handle, buf, size, root, user_context, flags) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_BROADCAST_OP, \
                     (DAT_PVOID) (buf), (DAT_COUNT) (size), (DAT_IB_COLLECTIVE_RANK) (root), \
                     DAT_IB_CONTEXT_ARG(user_context), (DAT_COMPLETION_FLAGS) (flags))

#define dat_ib_collective_barrier(coll_handle, user_context, flags) \
    dat_extension_op((DAT_IB_COLLECTIVE_HANDLE) (coll_handle), (DAT_IB_OP) DAT_IB_COLLECTIVE_BARRIER_OP, \
                     DAT_IB_CONTEXT_ARG(user_context), (DAT_COMPLETION_FLAGS) (flags))

/* Transport-neutral names of the counter calls. */
#define DAT_ATTR_COUNTERS       DAT_IB_ATTR_COUNTERS
#define dat_query_counters      dat_ib_query_counters
#define dat_print_counters      dat_ib_print_counters
#define DAT_QUERY_COUNTERS_OP   DAT_IB_QUERY_COUNTERS_OP
#define DAT_PRINT_COUNTERS_OP   DAT_IB_PRINT_COUNTERS_OP

#ifdef __cplusplus
}
#endif

#endif /* _DAT_IB_EXTENSIONS_H_ */
