/*
 * dat/dat_platform_specific.h - DAT 1.2 platform types (Linux flavour).
 *
 * Part of the libdat reimplementation (DAT 1.2 / uDAPL 1.2 ABI, OFED
 * compat-dapl compatible).  Fixes the basic scalar types that every other
 * DAT header builds on.  Sizes on x86_64 (LP64):
 *   DAT_UINT32 4, DAT_UINT64 8, DAT_UVERYLONG 8, DAT_COUNT 4, DAT_PVOID 8,
 *   DAT_SOCK_ADDR 16 (struct sockaddr), DAT_SOCK_ADDR6 28 (struct sockaddr_in6).
 */
#ifndef _DAT_PLATFORM_SPECIFIC_H_
#define _DAT_PLATFORM_SPECIFIC_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fixed-width integers. */
typedef uint32_t            DAT_UINT32;     /* unsigned 32 bit */
typedef uint64_t            DAT_UINT64;     /* unsigned 64 bit */
typedef unsigned long long  DAT_UVERYLONG;  /* at least 64 bit */

/* Generic pointer and signed count. */
typedef void *              DAT_PVOID;
typedef int                 DAT_COUNT;

/* A physical address. */
typedef DAT_UINT64          DAT_PADDR;

/* Socket addresses as the OS defines them. */
typedef struct sockaddr     DAT_SOCK_ADDR;
typedef struct sockaddr_in6 DAT_SOCK_ADDR6;

/* Address families used in DAT_SOCK_ADDR. */
#define DAT_AF_INET             AF_INET         /* 2 on Linux */
#define DAT_AF_INET6            AF_INET6        /* 10 on Linux */

/* Preferred buffer alignment for data transfer buffers, in bytes. */
#define DAT_OPTIMAL_ALIGNMENT   256

/*
 * Parameter annotations of the DAT specification's prototypes: input, output,
 * and both.  They expand to nothing; consumers of the era write them in their
 * own declarations (int f(IN DAT_EP_HANDLE ep, OUT DAT_COUNT *n)).
 */
#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif
#ifndef INOUT
#define INOUT
#endif

/* 64-bit constants, for a C library whose <stdint.h> lacks the macro. */
#ifndef UINT64_C
#define UINT64_C(c) c ## ULL
#endif

/* Storage class for exported DAT entry points. */
#ifndef DAT_EXPORT
#define DAT_EXPORT              extern
#endif

#ifdef __cplusplus
}
#endif

#endif /* _DAT_PLATFORM_SPECIFIC_H_ */
