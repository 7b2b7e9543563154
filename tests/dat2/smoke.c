/*
 * smoke.c - a DAT 2.0 program against libdat2.so.2 (<dat2/udat.h>, -ldat2).
 *
 *   smoke [-P ia_name] [-q conn_qual] [-h address]   (default IA "shm", address 127.0.0.1:
 *                                                     the IA's own IPv4 address)
 *
 * Forks a client; the parent is the server.  Checks, as a DAT 2.0 consumer sees them:
 *   - dat_ia_open asks for DAT 2.0; the provider attributes say DAT 2.0; the IA attributes
 *     offer the IB extensions exactly when the provider attributes say DAT_IB_FETCH_AND_ADD
 *     and DAT_IB_IMMED_DATA are "TRUE"; a few bad calls return DAT 2.0-numbered codes (and
 *     dat_strerror names them, the codes only DAT 2.0 has too), DAT_VA_TYPE_ZB is refused,
 *     dat_extension_op answers,
 *     dat_ib_open_query / dat_ib_close_query open, query and close the IA;
 *   - the server rejects the first connection with private data, which the client sees in its
 *     PEER_REJECTED event; the second is accepted;
 *   - send/recv with 16-byte triplets; the completions report their DAT_DTOS operation and
 *     32-bit length;
 *   - the client RDMA-writes a pattern into the server's buffer (RMR triplet from the server)
 *     and reads it back; the server checks it too;
 *   - with the IB extensions (dat_ib_extensions.h): the client fetch-and-adds and
 *     compare-and-swaps the first word of that buffer (DAT_IB_DTO_EVENTs of type
 *     DAT_IB_FETCH_AND_ADD / DAT_IB_CMP_AND_SWAP, old values in its own buffer), then RDMA-writes
 *     with immediate data: the server's receive completes as DAT_IB_RDMA_WRITE_IMMED_DATA with
 *     it, and the server checks the data and the word; without them, the operations return
 *     DAT_NOT_IMPLEMENTED;
 *   - disconnect;
 *   - where the provider attributes list DAT_IB_UD "TRUE": UD endpoints on a second qualifier.
 *     The server rejects the client's first UD connect with private data, which the client
 *     sees in its DAT_IB_UD_CONNECTION_REJECT_EVENT (type DAT_IB_UD_CONNECT_REJECT), and the
 *     second without (the event's private data pointer is not NULL all the same, as with
 *     OFED's providers). The client connects again (a DAT_IB_UD_CONNECTION_REQUEST_EVENT at
 *     the server), both get a
 *     DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED with the peer's address handle (types
 *     DAT_IB_UD_REMOTE_AH / DAT_IB_UD_PASSIVE_REMOTE_AH, the other side's private data), a
 *     datagram goes each way (received 40 bytes into the buffer, the length counting those 40:
 *     DAT_IB_UD_RECV with the sender's queue pair), then dat_ib_ud_ah_free / dat_ib_ud_cm_free
 *     and their errors; elsewhere dat_ep_create of a UD endpoint is DAT_NOT_IMPLEMENTED;
 *   - IB counters (counting started by dat_ib_start_counter): the server's IA counts its PSPs
 *     and the connection requests it rejected and accepted; the client's EP counts its connects,
 *     disconnect and posts (count and bytes per kind), its IA a PZ made and freed, its DTO EVD
 *     its waits and a dequeue of nothing; a query of one counter writes that counter's entry,
 *     reset zeroes, nothing is counted after dat_ib_stop_counter; bad calls get their codes;
 *   - free everything, close.
 * Prints one line per step; exit status 0 when every check passed.
 */
#define _POSIX_C_SOURCE 200809L
#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define BUF 4096
#define WAIT_US (15u * 1000u * 1000u)

static const char *role = "server";
/* An error code as the library builds it (DAT_ERROR is not in the consumer headers). */
#define ERR(type, subtype) (DAT_CLASS_ERROR | (type) | (subtype))
static const char REJECT_PD[] = "busy, try again";
static const char *server_address = "127.0.0.1";

/* The IB extension step: immediate data, atomics' operands. */
#define IMMED 0x1234abcdu
#define ADD 5u
#define SWAP 0x5157u

/* Whether the IA offers the IB extensions, and UD endpoints (the same on both sides). */
static int ib_ext, ib_ud;

/* The UD step: the GRH slot at the head of every UD receive, the messages. */
#define UD_GRH 40
static const char UD_ASK[] = "ud??", UD_ANSWER[] = "ud!!", UD_PING[] = "uping", UD_PONG[] = "upong";

static void fail(const char *what, DAT_RETURN r)
{
    const char *major = "", *minor = "";
    dat_strerror(r, &major, &minor);
    fprintf(stderr, "%s: FAIL %s: 0x%08x %s %s\n", role, what, (unsigned) r, major, minor);
    exit(1);
}

#define OK(call) do { DAT_RETURN r_ = (call); if (r_ != DAT_SUCCESS) fail(#call, r_); } while (0)
#define EXPECT(call, want) do { DAT_RETURN r_ = (call); if (r_ != (DAT_RETURN) (want)) { \
    fprintf(stderr, "%s: expected 0x%08x\n", role, (unsigned) (want)); fail(#call, r_); } } while (0)
#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "%s: FAIL %s\n", role, #cond); exit(1); } } while (0)

struct side {
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async_evd, dto_evd, recv_evd, conn_evd, cr_evd; /* dto_evd: sends and RDMA */
    DAT_PZ_HANDLE pz;
    DAT_EP_HANDLE ep;
    DAT_LMR_HANDLE lmr;
    DAT_LMR_CONTEXT lmr_context;
    DAT_RMR_CONTEXT rmr_context;
    unsigned char *buf;
};

static DAT_EVENT wait_event(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want)
{
    DAT_EVENT ev;
    DAT_COUNT more;
    OK(dat_evd_wait(evd, WAIT_US, 1, &ev, &more));
    if (ev.event_number != want) {
        fprintf(stderr, "%s: FAIL event 0x%x, expected 0x%x\n", role, (unsigned) ev.event_number, (unsigned) want);
        exit(1);
    }
    return ev;
}

/* A DTO completion (receives on their own EVD): success, the expected operation and length. */
static void wait_dto(struct side *s, DAT_DTOS op, DAT_SEG_LENGTH len)
{
    DAT_EVENT ev = wait_event(op == DAT_DTO_RECEIVE ? s->recv_evd : s->dto_evd, DAT_DTO_COMPLETION_EVENT);
    DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
    if (d->status != DAT_DTO_SUCCESS || d->operation != op || d->transfered_length != len) {
        fprintf(stderr, "%s: FAIL dto status %u operation %u length %u, expected operation %u length %u\n", role,
                (unsigned) d->status, (unsigned) d->operation, (unsigned) d->transfered_length, (unsigned) op,
                (unsigned) len);
        exit(1);
    }
}

static void open_side(struct side *s, char *ia_name)
{
    DAT_REGION_DESCRIPTION region;
    DAT_VLEN reg_len;
    DAT_VADDR reg_addr;
    DAT_EP_ATTR attr;

    memset(s, 0, sizeof *s);
    s->async_evd = DAT_HANDLE_NULL;
    OK(dat_ia_open(ia_name, 8, &s->async_evd, &s->ia));
    OK(dat_pz_create(s->ia, &s->pz));
    OK(dat_evd_create(s->ia, 32, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->dto_evd));
    OK(dat_evd_create(s->ia, 32, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->recv_evd));
    OK(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s->conn_evd));
    OK(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s->cr_evd));
    memset(&attr, 0, sizeof attr);
    attr.service_type = DAT_SERVICE_TYPE_RC;
    attr.max_message_size = BUF;
    attr.max_rdma_size = BUF;
    attr.qos = DAT_QOS_BEST_EFFORT;
    attr.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
    attr.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
    attr.max_recv_dtos = 8;
    attr.max_request_dtos = 8;
    attr.max_recv_iov = 2;
    attr.max_request_iov = 2;
    attr.max_rdma_read_in = 1;
    attr.max_rdma_read_out = 1;
    attr.max_rdma_read_iov = 1;
    attr.max_rdma_write_iov = 1;
    OK(dat_ep_create(s->ia, s->pz, s->recv_evd, s->dto_evd, s->conn_evd, &attr, &s->ep));
    s->buf = aligned_alloc(4096, 2 * BUF);
    CHECK(s->buf != NULL);
    memset(s->buf, 0, 2 * BUF);
    region.for_va = s->buf;
    OK(dat_lmr_create(s->ia, DAT_MEM_TYPE_VIRTUAL, region, 2 * BUF, s->pz,
                      DAT_MEM_PRIV_ALL_FLAG | DAT_IB_MEM_PRIV_REMOTE_ATOMIC, DAT_VA_TYPE_VA, &s->lmr,
                      &s->lmr_context, &s->rmr_context, &reg_len, &reg_addr));
}

static void close_side(struct side *s)
{
    OK(dat_ep_free(s->ep));
    OK(dat_lmr_free(s->lmr));
    OK(dat_evd_free(s->dto_evd));
    OK(dat_evd_free(s->recv_evd));
    OK(dat_evd_free(s->conn_evd));
    OK(dat_evd_free(s->cr_evd));
    OK(dat_pz_free(s->pz));
    OK(dat_ia_close(s->ia, DAT_CLOSE_GRACEFUL_FLAG));
    free(s->buf);
}

/* A triplet of `len` bytes at offset `off` of the side's buffer. */
static DAT_LMR_TRIPLET iov(struct side *s, size_t off, DAT_SEG_LENGTH len)
{
    DAT_LMR_TRIPLET t;
    t.virtual_address = (DAT_VADDR) (uintptr_t) (s->buf + off);
    t.segment_length = len;
    t.lmr_context = s->lmr_context;
    return t;
}

static DAT_DTO_COOKIE cookie(uint64_t v)
{
    DAT_DTO_COOKIE c;
    c.as_64 = v;
    return c;
}

/* The value of the provider-specific attribute `name` ("" when absent). */
static const char *provider_attr(const DAT_PROVIDER_ATTR *p, const char *name)
{
    DAT_COUNT i;
    for (i = 0; i < p->num_provider_specific_attr; i++)
        if (strcmp(p->provider_specific_attr[i].name, name) == 0)
            return p->provider_specific_attr[i].value;
    return "";
}

/* An IB extension completion on `evd`: a DAT_IB_DTO_EVENT of `type` with success. */
static DAT_IB_EXTENSION_EVENT_DATA wait_ext(DAT_EVD_HANDLE evd, DAT_IB_EXT_TYPE type, DAT_SEG_LENGTH len)
{
    DAT_EVENT ev = wait_event(evd, (DAT_EVENT_NUMBER) DAT_IB_DTO_EVENT);
    DAT_IB_EXTENSION_EVENT_DATA ext;
    DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
    memcpy(&ext, ev.event_extension_data, sizeof ext);
    if (d->status != DAT_DTO_SUCCESS || ext.type != type || ext.status != DAT_OP_SUCCESS || d->transfered_length != len) {
        fprintf(stderr, "%s: FAIL extension event type %u status %u/%u length %u, expected type %u length %u\n", role,
                (unsigned) ext.type, (unsigned) d->status, (unsigned) ext.status, (unsigned) d->transfered_length,
                (unsigned) type, (unsigned) len);
        exit(1);
    }
    return ext;
}

/* What DAT 2.0 numbers differently from DAT 1.2, as this program sees it. */
static void check_api(struct side *s)
{
    DAT_PROVIDER_ATTR pattr;
    DAT_IA_ATTR iattr;
    DAT_EVD_HANDLE evd;
    DAT_PZ_HANDLE pz;
    DAT_LMR_HANDLE lmr;
    DAT_UINT64 counters[DCNT_IA_ALL_COUNTERS];
    DAT_LMR_CONTEXT lc;
    DAT_RMR_CONTEXT rc;
    DAT_VLEN rl;
    DAT_VADDR ra;
    DAT_REGION_DESCRIPTION region;
    const char *major, *minor;
    DAT_EVD_HANDLE async;

    OK(dat_ia_query(s->ia, &async, DAT_IA_FIELD_ALL, &iattr, DAT_PROVIDER_FIELD_ALL, &pattr));
    CHECK(pattr.dapl_version_major == 2 && pattr.dapl_version_minor == 0);
    CHECK(iattr.zb_supported == DAT_FALSE);
    ib_ext = iattr.extension_supported == DAT_EXTENSION_IB;
    CHECK(ib_ext || iattr.extension_supported == DAT_EXTENSION_NONE);
    CHECK(!ib_ext || iattr.extension_version == DAT_IB_EXTENSION_VERSION);
    CHECK(strcmp(provider_attr(&pattr, DAT_IB_ATTR_FETCH_AND_ADD), ib_ext ? "TRUE" : "FALSE") == 0);
    CHECK(strcmp(provider_attr(&pattr, DAT_IB_ATTR_IMMED_DATA), ib_ext ? "TRUE" : "FALSE") == 0);
    ib_ud = strcmp(provider_attr(&pattr, DAT_IB_ATTR_UD), "TRUE") == 0;
    CHECK(!ib_ud || ib_ext);
    CHECK(DAT_INVALID_HANDLE1 == 0x1b && DAT_INVALID_ARG2 == 0x26); /* the 2.0 numbering */
    EXPECT(dat_pz_create(DAT_HANDLE_NULL, &pz), ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA));
    EXPECT(dat_evd_create(s->ia, 0, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &evd),
           ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2));
    EXPECT(dat_pz_free(s->pz), ERR(DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE));
    EXPECT(dat_set_consumer_context((DAT_HANDLE) (uintptr_t) 0xdeadbeef000ull, (DAT_CONTEXT) { .as_64 = 1 }),
           ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1));
    EXPECT(dat_ep_recv_query(DAT_HANDLE_NULL, NULL, NULL), ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP));
    OK(dat_strerror(ERR(DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE), &major, &minor));
    CHECK(strcmp(major, "DAT_INVALID_STATE") == 0 && strcmp(minor, "DAT_INVALID_STATE_PZ_IN_USE") == 0);
    /* codes only DAT 2.0 has are named too */
    OK(dat_strerror(ERR(DAT_PORT_IN_USE, DAT_INVALID_HANDLE_CSP), &major, &minor));
    CHECK(strcmp(major, "DAT_PORT_IN_USE") == 0 && strcmp(minor, "DAT_INVALID_HANDLE_CSP") == 0);
    OK(dat_strerror(ERR(DAT_COMM_NOT_SUPPORTED, DAT_INVALID_STATE_SRQ_SHUTDOWN), &major, &minor));
    CHECK(strcmp(major, "DAT_COMM_NOT_SUPPORTED") == 0 && strcmp(minor, "DAT_INVALID_STATE_SRQ_SHUTDOWN") == 0);
    region.for_va = s->buf;
    EXPECT(dat_lmr_create(s->ia, DAT_MEM_TYPE_VIRTUAL, region, BUF, s->pz, DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_ZB,
                          &lmr, &lc, &rc, &rl, &ra),
           ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG7));
    EXPECT(dat_ib_post_fetch_and_add(DAT_HANDLE_NULL, 1, NULL, cookie(0), NULL, 0),
           ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP));
    EXPECT(dat_ib_post_fetch_and_add(s->ep, 1, NULL, cookie(0), NULL, 0),
           ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5));
    CHECK(strcmp(provider_attr(&pattr, DAT_IB_ATTR_COUNTERS), "TRUE") == 0);
    EXPECT(dat_ib_query_counters(s->pz, 0, counters, 0), ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1));
    EXPECT(dat_ib_query_counters(s->ia, DCNT_IA_ALL_COUNTERS + 1, counters, 0),
           ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3));
    EXPECT(dat_ib_query_counters(s->ia, -1, counters, 0), ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3));
    EXPECT(dat_ib_query_counters(s->ep, DCNT_EP_POST_SEND, NULL, 0), ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4));
    EXPECT(dat_ib_print_counters(s->pz, 0, 0), ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1));
    EXPECT(dat_ib_start_counter(s->ep, DCNT_IA_CM), ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA));
    EXPECT(dat_ib_stop_counter(s->ia, DCNT_IA_DIAG + 1), ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3));
    EXPECT(dat_extension_op(s->ep, 0x7777), ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2));
    printf("%s: DAT 2.0 attributes and return codes as expected\n", role);
}

/* Starts counting (for this process) and zeroes what the IA and EP counted before; a PZ made
 * and freed is counted on the IA, a query of one counter writes its own entry only. */
static void start_counters(struct side *s)
{
    DAT_UINT64 c[DCNT_IA_ALL_COUNTERS];
    DAT_PZ_HANDLE pz;

    OK(dat_ib_start_counter(s->ia, DCNT_IA_CM));
    OK(dat_ib_query_counters(s->ia, DCNT_IA_ALL_COUNTERS, c, 1));
    OK(dat_ib_query_counters(s->ep, DCNT_EP_ALL_COUNTERS, c, 1));
    OK(dat_pz_create(s->ia, &pz));
    OK(dat_pz_free(pz));
    memset(c, 0xff, sizeof c);
    OK(dat_ib_query_counters(s->ia, DCNT_IA_PZ_FREE, c, 0));
    CHECK(c[DCNT_IA_PZ_FREE] == 1 && c[DCNT_IA_PZ_CREATE] == ~(DAT_UINT64) 0);
    OK(dat_ib_query_counters(s->ia, DCNT_IA_ALL_COUNTERS, c, 0));
    CHECK(c[DCNT_IA_PZ_CREATE] == 1 && c[DCNT_IA_PZ_FREE] == 1 && c[DCNT_IA_EP_CREATE] == 0);
}

/* The client's counters after its exchange (see client()), then reset and stop. */
static void check_counters(struct side *s)
{
    DAT_UINT64 c[DCNT_EP_ALL_COUNTERS], e[DCNT_EVD_ALL_COUNTERS];
    DAT_EVENT ev;

    memset(c, 0xff, sizeof c);
    OK(dat_ib_query_counters(s->ep, DCNT_EP_ALL_COUNTERS, c, 0));
    CHECK(c[DCNT_EP_CONNECT] == 2 && c[DCNT_EP_DISCONNECT] == 1);
    CHECK(c[DCNT_EP_POST_SEND] == 2 && c[DCNT_EP_POST_SEND_DATA] == 6 + 5);
    CHECK(c[DCNT_EP_POST_RECV] == 1 && c[DCNT_EP_POST_RECV_DATA] == sizeof(DAT_RMR_TRIPLET));
    CHECK(c[DCNT_EP_POST_WRITE] == 1 && c[DCNT_EP_POST_WRITE_DATA] == BUF);
    CHECK(c[DCNT_EP_POST_READ] == 1 && c[DCNT_EP_POST_READ_DATA] == BUF);
    CHECK(c[DCNT_EP_POST_FETCH_ADD] == (ib_ext ? 1u : 0u) && c[DCNT_EP_POST_CMP_SWAP] == (ib_ext ? 2u : 0u));
    CHECK(c[DCNT_EP_POST_WRITE_IMM] == (ib_ext ? 1u : 0u) && c[DCNT_EP_POST_WRITE_IMM_DATA] == (ib_ext ? 64u : 0u));
    CHECK(c[DCNT_EP_POST_SEND_UD] == 0 && c[DCNT_EP_RECV] == 0);
    OK(dat_ib_print_counters(s->ep, DCNT_EP_ALL_COUNTERS, 0));
    /* one wait per request completion: hello, write, read, (3 atomics, write with immediate), done */
    OK(dat_ib_query_counters(s->dto_evd, DCNT_EVD_ALL_COUNTERS, e, 1));
    CHECK(e[DCNT_EVD_WAIT] == (ib_ext ? 8u : 4u) && e[DCNT_EVD_DEQUEUE] == 0);
    EXPECT(dat_evd_dequeue(s->dto_evd, &ev), ERR(DAT_QUEUE_EMPTY, 0));
    OK(dat_ib_query_counters(s->dto_evd, DCNT_EVD_ALL_COUNTERS, e, 0));
    CHECK(e[DCNT_EVD_WAIT] == 0 && e[DCNT_EVD_DEQUEUE] == 1 && e[DCNT_EVD_DEQUEUE_NOT_FOUND] == 1);
    CHECK(e[DCNT_EVD_DEQUEUE_FOUND] == 0 && e[DCNT_EVD_DEQUEUE_POLL] == 1 && e[DCNT_EVD_DEQUEUE_POLL_FOUND] == 0);
    OK(dat_ib_stop_counter(s->ia, DCNT_IA_CM));
    EXPECT(dat_evd_dequeue(s->dto_evd, &ev), ERR(DAT_QUEUE_EMPTY, 0));
    OK(dat_ib_query_counters(s->dto_evd, DCNT_EVD_DEQUEUE, e, 0));
    CHECK(e[DCNT_EVD_DEQUEUE] == 1); /* not counted once stopped */
    printf("client: EP, IA and EVD counters as expected\n");
}

/* The IB extensions against the server's buffer `rt` (its pattern written already): atomics on
 * its first word, then a write with immediate data of 64 bytes at offset 64. */
static void extensions(struct side *s, const DAT_RMR_TRIPLET *rt)
{
    DAT_LMR_TRIPLET t = iov(s, 512, 8);
    DAT_RMR_TRIPLET w = *rt;
    DAT_UINT64 start, old;
    size_t i;

    if (!ib_ext) {
        EXPECT(dat_ib_post_fetch_and_add(s->ep, ADD, &t, cookie(20), &w, DAT_COMPLETION_DEFAULT_FLAG),
               ERR(DAT_NOT_IMPLEMENTED, 0));
        t = iov(s, 0, 64);
        EXPECT(dat_ib_post_rdma_write_immed(s->ep, 1, &t, cookie(21), &w, IMMED, DAT_COMPLETION_DEFAULT_FLAG),
               ERR(DAT_NOT_IMPLEMENTED, 0));
        printf("client: no IB extensions here: DAT_NOT_IMPLEMENTED\n");
        return;
    }
    memcpy(&start, s->buf + BUF, 8); /* the pattern the server's word holds */
    w.segment_length = 8;
    OK(dat_ib_post_fetch_and_add(s->ep, ADD, &t, cookie(20), &w, DAT_COMPLETION_DEFAULT_FLAG));
    wait_ext(s->dto_evd, DAT_IB_FETCH_AND_ADD, 8);
    memcpy(&old, s->buf + 512, 8);
    CHECK(old == start);
    OK(dat_ib_post_cmp_and_swap(s->ep, start + ADD, SWAP, &t, cookie(21), &w, DAT_COMPLETION_DEFAULT_FLAG));
    wait_ext(s->dto_evd, DAT_IB_CMP_AND_SWAP, 8);
    memcpy(&old, s->buf + 512, 8);
    CHECK(old == start + ADD);
    OK(dat_ib_post_cmp_and_swap(s->ep, start, 1, &t, cookie(22), &w, DAT_COMPLETION_DEFAULT_FLAG));
    wait_ext(s->dto_evd, DAT_IB_CMP_AND_SWAP, 8);
    memcpy(&old, s->buf + 512, 8);
    CHECK(old == SWAP); /* compare failed: nothing swapped */
    printf("client: fetch-and-add and compare-and-swap checked\n");

    for (i = 0; i < 64; i++)
        s->buf[i] = (unsigned char) ((64 + i) ^ 0xa5);
    t = iov(s, 0, 64);
    w.virtual_address = rt->virtual_address + 64;
    w.segment_length = 64;
    OK(dat_ib_post_rdma_write_immed(s->ep, 1, &t, cookie(23), &w, IMMED, DAT_COMPLETION_DEFAULT_FLAG));
    wait_ext(s->dto_evd, DAT_IB_RDMA_WRITE_IMMED, 64);
    printf("client: RDMA write with immediate data completed\n");
}

/* dat_ib_open_query / dat_ib_close_query: the IA opened for a query says what check_api saw. */
static void check_open_query(char *ia_name)
{
    DAT_IA_HANDLE q;
    DAT_IA_ATTR a;
    DAT_PROVIDER_ATTR p;

    OK(dat_ib_open_query(ia_name, &q, DAT_IA_FIELD_ALL, &a, DAT_PROVIDER_FIELD_ALL, &p));
    CHECK(p.dapl_version_major == 2 && (a.extension_supported == DAT_EXTENSION_IB) == ib_ext);
    CHECK(strcmp(provider_attr(&p, DAT_IB_ATTR_IMMED_DATA), ib_ext ? "TRUE" : "FALSE") == 0);
    OK(dat_ib_close_query(q));
    EXPECT(dat_ib_close_query(q), ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA));
    printf("%s: dat_ib_open_query and dat_ib_close_query as expected\n", role);
}

/* A UD endpoint on the side's PZ and EVDs (or DAT_NOT_IMPLEMENTED where the IA has none). */
static DAT_RETURN ud_endpoint(struct side *s, DAT_EP_HANDLE *ep)
{
    DAT_EP_ATTR attr;
    memset(&attr, 0, sizeof attr);
    attr.service_type = (DAT_SERVICE_TYPE) DAT_IB_SERVICE_TYPE_UD;
    attr.max_message_size = 512;
    attr.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
    attr.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
    attr.max_recv_dtos = 4;
    attr.max_request_dtos = 4;
    attr.max_recv_iov = 1;
    attr.max_request_iov = 1;
    return dat_ep_create(s->ia, s->pz, s->recv_evd, s->dto_evd, s->conn_evd, &attr, ep);
}

/* The UD connection event on the side's connection EVD: established on `ep`, of `type`, with
 * the other side's private data `pd`; returns its extension data (the peer's address handle). */
static DAT_IB_EXTENSION_EVENT_DATA ud_established(struct side *s, DAT_EP_HANDLE ep, DAT_IB_EXT_TYPE type,
                                                  const char *pd)
{
    DAT_EVENT ev = wait_event(s->conn_evd, (DAT_EVENT_NUMBER) DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED);
    DAT_CONNECTION_EVENT_DATA *c = &ev.event_data.connect_event_data;
    DAT_IB_EXTENSION_EVENT_DATA ext;
    memcpy(&ext, ev.event_extension_data, sizeof ext);
    CHECK(c->ep_handle == ep && ext.type == type && ext.status == DAT_OP_SUCCESS);
    CHECK(c->private_data_size == (DAT_COUNT) strlen(pd) + 1 && memcmp(c->private_data, pd, strlen(pd) + 1) == 0);
    CHECK(ext.remote_ah.ah != NULL && ext.context.as_ptr == (DAT_PVOID) ext.remote_ah.ah);
    return ext;
}

/* A datagram `msg` received at offset UD_GRH of the side's buffer, from queue pair `qpn`. */
static void ud_received(struct side *s, const char *msg, DAT_UINT32 qpn)
{
    DAT_IB_EXTENSION_EVENT_DATA ext =
        wait_ext(s->recv_evd, DAT_IB_UD_RECV, (DAT_SEG_LENGTH) (UD_GRH + strlen(msg) + 1));
    CHECK(ext.remote_ah.qpn == qpn);
    CHECK(memcmp(s->buf + UD_GRH, msg, strlen(msg) + 1) == 0);
}

/* Sends `msg` as one datagram on `ep` to `ah` and waits for its completion. */
static void ud_send(struct side *s, DAT_EP_HANDLE ep, DAT_IB_ADDR_HANDLE *ah, const char *msg)
{
    DAT_LMR_TRIPLET t = iov(s, BUF, (DAT_SEG_LENGTH) strlen(msg) + 1);
    memcpy(s->buf + BUF, msg, strlen(msg) + 1);
    OK(dat_ib_post_send_ud(ep, 1, &t, ah, cookie(50), DAT_COMPLETION_DEFAULT_FLAG));
    wait_ext(s->dto_evd, DAT_IB_UD_SEND, (DAT_SEG_LENGTH) strlen(msg) + 1);
}

/* Frees the address handle and the exchange of `ext`, and checks both are gone. */
static void ud_free(DAT_EP_HANDLE ep, DAT_IB_EXTENSION_EVENT_DATA *ext, struct side *s)
{
    DAT_LMR_TRIPLET t = iov(s, BUF, 4);
    DAT_RETURN bad_handle = ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1);
    OK(dat_ib_ud_ah_free(ep, &ext->remote_ah));
    EXPECT(dat_ib_ud_ah_free(ep, &ext->remote_ah), bad_handle);
    EXPECT(dat_ib_post_send_ud(ep, 1, &t, &ext->remote_ah, cookie(51), DAT_COMPLETION_DEFAULT_FLAG), bad_handle);
    OK(dat_ib_ud_cm_free(ep, ext->context));
    EXPECT(dat_ib_ud_cm_free(ep, ext->context), bad_handle);
}

/* The server's UD step on `psp` (qualifier `qual`): accept the client, answer its datagram. */
static void ud_server(struct side *s, DAT_CONN_QUAL qual)
{
    DAT_EP_HANDLE ep;
    DAT_EVENT ev;
    DAT_CR_PARAM crp;
    DAT_LMR_TRIPLET t = iov(s, 0, 256);
    DAT_IB_EXTENSION_EVENT_DATA ext;
    DAT_IB_ADDR_HANDLE garbage;

    OK(ud_endpoint(s, &ep));
    OK(dat_ep_post_recv(ep, 1, &t, cookie(40), DAT_COMPLETION_DEFAULT_FLAG));
    ev = wait_event(s->cr_evd, (DAT_EVENT_NUMBER) DAT_IB_UD_CONNECTION_REQUEST_EVENT);
    OK(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle, (DAT_COUNT) sizeof REJECT_PD,
                     (DAT_PVOID) REJECT_PD));
    ev = wait_event(s->cr_evd, (DAT_EVENT_NUMBER) DAT_IB_UD_CONNECTION_REQUEST_EVENT);
    OK(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle, 0, NULL));
    printf("server: rejected two UD requests, the first with private data\n");
    ev = wait_event(s->cr_evd, (DAT_EVENT_NUMBER) DAT_IB_UD_CONNECTION_REQUEST_EVENT);
    memcpy(&ext, ev.event_extension_data, sizeof ext);
    CHECK(ext.type == DAT_IB_UD_CONNECT_REQUEST && ext.remote_ah.ah == NULL);
    CHECK(ev.event_data.cr_arrival_event_data.conn_qual == qual);
    OK(dat_cr_query(ev.event_data.cr_arrival_event_data.cr_handle, DAT_CR_FIELD_ALL, &crp));
    CHECK(memcmp(crp.private_data, UD_ASK, sizeof UD_ASK) == 0);
    OK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, ep, sizeof UD_ANSWER, (DAT_PVOID) UD_ANSWER));
    ext = ud_established(s, ep, DAT_IB_UD_PASSIVE_REMOTE_AH, UD_ASK);
    printf("server: UD endpoint accepted, peer queue pair 0x%x\n", (unsigned) ext.remote_ah.qpn);
    ud_received(s, UD_PING, ext.remote_ah.qpn);
    ud_send(s, ep, &ext.remote_ah, UD_PONG);
    printf("server: UD datagrams both ways checked\n");

    t = iov(s, BUF, 4);
    EXPECT(dat_ib_post_send_ud(ep, 1, &t, NULL, cookie(52), 0), ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4));
    garbage = ext.remote_ah;
    garbage.ah = (struct ibv_ah *) (uintptr_t) 0x1000;
    EXPECT(dat_ib_post_send_ud(ep, 1, &t, &garbage, cookie(53), 0), ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1));
    EXPECT(dat_ep_post_send(ep, 1, &t, cookie(54), 0), ERR(DAT_MODEL_NOT_SUPPORTED, 0));
    EXPECT(dat_ib_post_send_ud(s->ep, 1, &t, &ext.remote_ah, cookie(55), 0), ERR(DAT_MODEL_NOT_SUPPORTED, 0));
    ud_free(ep, &ext, s);
    OK(dat_ep_free(ep));
    printf("server: UD address handle errors as expected\n");
}

/* A UD connect the server rejects, with private data `pd` (NULL: none; the event's pointer is
 * not NULL either way). */
static void ud_rejected(struct side *s, DAT_IA_ADDRESS_PTR addr, DAT_CONN_QUAL qual, const char *pd)
{
    DAT_EP_HANDLE ep;
    DAT_EVENT ev;
    DAT_CONNECTION_EVENT_DATA *c = &ev.event_data.connect_event_data;
    DAT_IB_EXTENSION_EVENT_DATA ext;

    OK(ud_endpoint(s, &ep));
    OK(dat_ep_connect(ep, addr, qual, WAIT_US, sizeof UD_ASK, (DAT_PVOID) UD_ASK, DAT_QOS_BEST_EFFORT,
                      DAT_CONNECT_DEFAULT_FLAG));
    ev = wait_event(s->conn_evd, (DAT_EVENT_NUMBER) DAT_IB_UD_CONNECTION_REJECT_EVENT);
    memcpy(&ext, ev.event_extension_data, sizeof ext);
    CHECK(c->ep_handle == ep && ext.type == DAT_IB_UD_CONNECT_REJECT && ext.remote_ah.ah == NULL);
    CHECK(c->private_data != NULL);
    if (pd)
        CHECK(c->private_data_size >= (DAT_COUNT) strlen(pd) + 1 && memcmp(c->private_data, pd, strlen(pd) + 1) == 0);
    OK(dat_ep_free(ep));
}

/* The client's UD step: two connects the server rejects (the first with private data), then
 * one it accepts; a datagram each way. */
static void ud_client(struct side *s, DAT_IA_ADDRESS_PTR addr, DAT_CONN_QUAL qual)
{
    DAT_EP_HANDLE ep;
    DAT_LMR_TRIPLET t = iov(s, 0, 256);
    DAT_IB_EXTENSION_EVENT_DATA ext;

    if (!ib_ud) {
        EXPECT(ud_endpoint(s, &ep), ERR(DAT_NOT_IMPLEMENTED, 0));
        printf("client: no UD endpoints here: DAT_NOT_IMPLEMENTED\n");
        return;
    }
    ud_rejected(s, addr, qual, REJECT_PD);
    ud_rejected(s, addr, qual, NULL);
    printf("client: two UD connects rejected, the server's private data in the first event\n");
    OK(ud_endpoint(s, &ep));
    OK(dat_ep_post_recv(ep, 1, &t, cookie(41), DAT_COMPLETION_DEFAULT_FLAG));
    OK(dat_ep_connect(ep, addr, qual, WAIT_US, sizeof UD_ASK, (DAT_PVOID) UD_ASK, DAT_QOS_BEST_EFFORT,
                      DAT_CONNECT_DEFAULT_FLAG));
    ext = ud_established(s, ep, DAT_IB_UD_REMOTE_AH, UD_ANSWER);
    ud_send(s, ep, &ext.remote_ah, UD_PING);
    ud_received(s, UD_PONG, ext.remote_ah.qpn);
    printf("client: UD datagrams both ways checked\n");
    ud_free(ep, &ext, s);
    OK(dat_ep_free(ep));
}

static int server(char *ia_name, DAT_CONN_QUAL qual, int ready_fd)
{
    struct side s;
    DAT_PSP_HANDLE psp, ud_psp = DAT_HANDLE_NULL;
    DAT_EVENT ev;
    DAT_LMR_TRIPLET t;
    DAT_RMR_TRIPLET rt;
    DAT_CR_HANDLE cr;
    size_t i;

    open_side(&s, ia_name);
    check_api(&s);
    check_open_query(ia_name);
    OK(dat_ib_start_counter(s.ia, DCNT_IA_LNK));
    OK(dat_psp_create(s.ia, qual, s.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp));
    if (ib_ud)
        OK(dat_psp_create(s.ia, qual + 1, s.cr_evd, DAT_PSP_CONSUMER_FLAG, &ud_psp));
    CHECK(write(ready_fd, "L", 1) == 1);
    printf("server: listening on %llu\n", (unsigned long long) qual);

    ev = wait_event(s.cr_evd, DAT_CONNECTION_REQUEST_EVENT);
    OK(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle, (DAT_COUNT) sizeof REJECT_PD,
                     (DAT_PVOID) REJECT_PD));
    printf("server: rejected the first request with private data\n");

    ev = wait_event(s.cr_evd, DAT_CONNECTION_REQUEST_EVENT);
    cr = ev.event_data.cr_arrival_event_data.cr_handle;
    t = iov(&s, 0, 64);
    OK(dat_ep_post_recv(s.ep, 1, &t, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
    OK(dat_cr_accept(cr, s.ep, 0, NULL));
    wait_event(s.conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED);
    printf("server: connected\n");
    {
        DAT_UINT64 c[DCNT_IA_ALL_COUNTERS];
        OK(dat_ib_query_counters(s.ia, DCNT_IA_ALL_COUNTERS, c, 0));
        CHECK(c[DCNT_IA_PSP_CREATE] == (ib_ud ? 2u : 1u) && c[DCNT_IA_SP_CR] == 2);
        CHECK(c[DCNT_IA_SP_CR_REJECTED] == 1 && c[DCNT_IA_SP_CR_ACCEPTED] == 1);
        printf("server: IA counters of PSPs and connection requests as expected\n");
    }

    /* the client's hello */
    wait_dto(&s, DAT_DTO_RECEIVE, 6);
    CHECK(memcmp(s.buf, "hello", 6) == 0);
    /* our buffer's second half, as an RMR triplet; then the client's "done" */
    t = iov(&s, 0, 64);
    if (ib_ext) /* consumed by the write with immediate data (its buffer stays untouched) */
        OK(dat_ep_post_recv(s.ep, 1, &t, cookie(4), DAT_COMPLETION_DEFAULT_FLAG));
    OK(dat_ep_post_recv(s.ep, 1, &t, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
    rt.virtual_address = (DAT_VADDR) (uintptr_t) (s.buf + BUF);
    rt.segment_length = BUF;
    rt.rmr_context = s.rmr_context;
    memcpy(s.buf + 128, &rt, sizeof rt);
    t = iov(&s, 128, sizeof rt);
    OK(dat_ep_post_send(s.ep, 1, &t, cookie(3), DAT_COMPLETION_DEFAULT_FLAG));
    wait_dto(&s, DAT_DTO_SEND, sizeof rt);
    if (ib_ext) {
        DAT_IB_EXTENSION_EVENT_DATA ext = wait_ext(s.recv_evd, DAT_IB_RDMA_WRITE_IMMED_DATA, 64);
        CHECK(ext.val.immed.data == IMMED);
    }
    wait_dto(&s, DAT_DTO_RECEIVE, 5);
    CHECK(memcmp(s.buf, "done", 5) == 0);
    for (i = ib_ext ? 128 : 0; i < BUF; i++)
        CHECK(s.buf[BUF + i] == (unsigned char) (i * 7 + 3));
    printf("server: the client's RDMA write landed\n");
    if (ib_ext) {
        DAT_UINT64 word;
        for (i = 64; i < 128; i++)
            CHECK(s.buf[BUF + i] == (unsigned char) (i ^ 0xa5));
        memcpy(&word, s.buf + BUF, 8);
        CHECK(word == SWAP);
        printf("server: the write with immediate data 0x%x and the atomics landed\n", IMMED);
    }

    wait_event(s.conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED);
    OK(dat_psp_free(psp));
    if (ib_ud) {
        ud_server(&s, qual + 1);
        OK(dat_psp_free(ud_psp));
    }
    close_side(&s);
    printf("server: done\n");
    return 0;
}

static int client(char *ia_name, DAT_CONN_QUAL qual, int ready_fd)
{
    struct side s;
    struct sockaddr_in addr;
    DAT_EVENT ev;
    DAT_CONNECTION_EVENT_DATA *c;
    DAT_LMR_TRIPLET t;
    DAT_RMR_TRIPLET rt;
    DAT_IA_ATTR iattr;
    DAT_PROVIDER_ATTR pattr;
    char ready;
    size_t i;

    role = "client";
    CHECK(read(ready_fd, &ready, 1) == 1);
    open_side(&s, ia_name);
    start_counters(&s);
    OK(dat_ia_query(s.ia, NULL, DAT_IA_FIELD_ALL, &iattr, DAT_PROVIDER_FIELD_ALL, &pattr));
    ib_ext = iattr.extension_supported == DAT_EXTENSION_IB;
    ib_ud = strcmp(provider_attr(&pattr, DAT_IB_ATTR_UD), "TRUE") == 0;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    CHECK(inet_pton(AF_INET, server_address, &addr.sin_addr) == 1);

    /* the first attempt is rejected with private data */
    OK(dat_ep_connect(s.ep, (DAT_IA_ADDRESS_PTR) &addr, qual, WAIT_US, 0, NULL, DAT_QOS_BEST_EFFORT,
                      DAT_CONNECT_DEFAULT_FLAG));
    ev = wait_event(s.conn_evd, DAT_CONNECTION_EVENT_PEER_REJECTED);
    c = &ev.event_data.connect_event_data;
    CHECK(c->private_data_size >= (DAT_COUNT) sizeof REJECT_PD);
    CHECK(memcmp(c->private_data, REJECT_PD, sizeof REJECT_PD) == 0);
    printf("client: rejected with the server's private data\n");

    /* a rejected EP is disconnected: reset it and connect again */
    OK(dat_ep_reset(s.ep));
    OK(dat_ep_connect(s.ep, (DAT_IA_ADDRESS_PTR) &addr, qual, WAIT_US, 0, NULL, DAT_QOS_BEST_EFFORT,
                      DAT_CONNECT_DEFAULT_FLAG));
    wait_event(s.conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED);
    printf("client: connected\n");

    t = iov(&s, 256, sizeof rt);
    OK(dat_ep_post_recv(s.ep, 1, &t, cookie(10), DAT_COMPLETION_DEFAULT_FLAG));
    memcpy(s.buf, "hello", 6);
    t = iov(&s, 0, 6);
    OK(dat_ep_post_send(s.ep, 1, &t, cookie(11), DAT_COMPLETION_DEFAULT_FLAG));
    wait_dto(&s, DAT_DTO_SEND, 6);
    wait_dto(&s, DAT_DTO_RECEIVE, sizeof rt);
    memcpy(&rt, s.buf + 256, sizeof rt);
    CHECK(rt.segment_length == BUF);

    for (i = 0; i < BUF; i++)
        s.buf[BUF + i] = (unsigned char) (i * 7 + 3);
    t = iov(&s, BUF, BUF);
    OK(dat_ep_post_rdma_write(s.ep, 1, &t, cookie(12), &rt, DAT_COMPLETION_DEFAULT_FLAG));
    wait_dto(&s, DAT_DTO_RDMA_WRITE, BUF);
    memset(s.buf + BUF, 0, BUF);
    OK(dat_ep_post_rdma_read(s.ep, 1, &t, cookie(13), &rt, DAT_COMPLETION_DEFAULT_FLAG));
    wait_dto(&s, DAT_DTO_RDMA_READ, BUF);
    for (i = 0; i < BUF; i++)
        CHECK(s.buf[BUF + i] == (unsigned char) (i * 7 + 3));
    printf("client: RDMA write and read back of %d bytes checked\n", BUF);
    extensions(&s, &rt);

    memcpy(s.buf, "done", 5);
    t = iov(&s, 0, 5);
    OK(dat_ep_post_send(s.ep, 1, &t, cookie(14), DAT_COMPLETION_DEFAULT_FLAG));
    wait_dto(&s, DAT_DTO_SEND, 5);
    OK(dat_ep_disconnect(s.ep, DAT_CLOSE_GRACEFUL_FLAG));
    wait_event(s.conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED);
    check_counters(&s);
    ud_client(&s, (DAT_IA_ADDRESS_PTR) &addr, qual + 1);
    close_side(&s);
    printf("client: done\n");
    return 0;
}

int main(int argc, char **argv)
{
    char shm[] = "shm";
    char *ia_name = shm;
    DAT_CONN_QUAL qual = 30000 + (DAT_CONN_QUAL) getpid() % 20000;
    int fds[2], opt, status;
    pid_t pid;

    while ((opt = getopt(argc, argv, "P:q:h:")) != -1) {
        if (opt == 'P')
            ia_name = optarg;
        else if (opt == 'q')
            qual = strtoull(optarg, NULL, 0);
        else if (opt == 'h')
            server_address = optarg;
        else {
            fprintf(stderr, "usage: %s [-P ia_name] [-q conn_qual] [-h address]\n", argv[0]);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (pipe(fds) != 0)
        return 1;
    pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        close(fds[1]);
        return client(ia_name, qual, fds[0]);
    }
    close(fds[0]);
    status = server(ia_name, qual, fds[1]);
    CHECK(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "smoke: client failed\n");
        return 1;
    }
    printf("smoke: PASSED\n");
    return 0;
}
