/* tests/vm/cm-probe.c -- shows the rdma_cm private data a DAT provider puts on the wire.
 *
 *   cm-probe listen IP PORT    waits for one connection request on IP:PORT, prints its
 *                              private data in hex and rejects it
 *   cm-probe connect IP PORT   connects an RC queue pair to IP:PORT with the private data
 *                              "cm-probe" and prints what the reply (accept or reject) carries
 *
 * Used by tests/vm/dapl2-utils.sh to compare what OFED's cma provider (libdaplofa) and our
 * verbs provider send and expect, with each DAT side talking to this plain rdma_cm peer.
 * Build: cc -O2 cm-probe.c -lrdmacm -libverbs. Exit status 0 when an event was printed. */
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_data(const char *what, const struct rdma_cm_event *ev)
{
    const unsigned char *p = ev->param.conn.private_data;
    int n = p ? ev->param.conn.private_data_len : 0;
    printf("cm-probe: %s (status %d), private data %d bytes:", what, ev->status, n);
    for (int i = 0; i < n; i++)
        printf("%s%02x", i % 16 ? " " : "\n  ", p[i]);
    printf("\n");
    fflush(stdout);
}

/* the next event on CH, which must be WANT (any event when WANT < 0) */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch, int want)
{
    struct rdma_cm_event *ev;
    if (rdma_get_cm_event(ch, &ev)) {
        perror("cm-probe: rdma_get_cm_event");
        exit(1);
    }
    if (want >= 0 && (int)ev->event != want) {
        fprintf(stderr, "cm-probe: %s (status %d), expected %s\n", rdma_event_str(ev->event), ev->status,
                rdma_event_str(want));
        exit(1);
    }
    return ev;
}

int main(int argc, char **argv)
{
    struct rdma_event_channel *ch = rdma_create_event_channel();
    struct rdma_cm_id *id;
    struct rdma_cm_event *ev;
    struct sockaddr_in sin = {.sin_family = AF_INET};
    if (argc != 4 || inet_pton(AF_INET, argv[2], &sin.sin_addr) != 1) {
        fprintf(stderr, "usage: cm-probe listen|connect IP PORT\n");
        return 2;
    }
    sin.sin_port = htons((unsigned short)atoi(argv[3]));
    if (!ch || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP)) {
        perror("cm-probe: rdma_cm");
        return 1;
    }
    if (!strcmp(argv[1], "listen")) {
        if (rdma_bind_addr(id, (struct sockaddr *)&sin) || rdma_listen(id, 1)) {
            perror("cm-probe: listen");
            return 1;
        }
        printf("cm-probe: listening on %s:%s\n", argv[2], argv[3]);
        fflush(stdout);
        ev = next_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
        print_data("connection request", ev);
        rdma_reject(ev->id, NULL, 0);
        rdma_ack_cm_event(ev);
        return 0;
    }
    if (strcmp(argv[1], "connect")) {
        fprintf(stderr, "usage: cm-probe listen|connect IP PORT\n");
        return 2;
    }
    static const char hello[] = "cm-probe";
    struct ibv_qp_init_attr qpa = {.qp_type = IBV_QPT_RC,
                                   .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
    struct rdma_conn_param cp = {.private_data = hello, .private_data_len = sizeof hello, .responder_resources = 1,
                                 .initiator_depth = 1, .retry_count = 7, .rnr_retry_count = 7};
    if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&sin, 2000)) {
        perror("cm-probe: rdma_resolve_addr");
        return 1;
    }
    rdma_ack_cm_event(next_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
    if (rdma_resolve_route(id, 2000)) {
        perror("cm-probe: rdma_resolve_route");
        return 1;
    }
    rdma_ack_cm_event(next_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
    if (rdma_create_qp(id, NULL, &qpa) || rdma_connect(id, &cp)) {
        perror("cm-probe: connect");
        return 1;
    }
    ev = next_event(ch, -1);
    print_data(rdma_event_str(ev->event), ev);
    int established = ev->event == RDMA_CM_EVENT_ESTABLISHED;
    rdma_ack_cm_event(ev);
    if (established)
        rdma_disconnect(id);
    return 0;
}
