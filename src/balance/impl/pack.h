/* Private: little-endian byte blobs for lbstate.h.  A writer grows its
 * buffer and remembers an allocation failure; a reader remembers reading
 * past the end; both are checked once at the end. */
#ifndef AMRDLB_PACK_H
#define AMRDLB_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "balance/balance.h"

typedef struct {
  unsigned char *buf;
  size_t len, cap;
  int failed;
} lb_packer;

typedef struct {
  const unsigned char *buf;
  size_t len, pos;
  int failed;
} lb_unpacker;

/** Start a blob with its 4-byte tag and LB_STATE_VERSION. */
void lb_pack_begin(lb_packer *p, const char *tag);
void lb_pack_i64(lb_packer *p, int64_t v);
/** A double, bit for bit. */
void lb_pack_f64(lb_packer *p, double v);
/** Hand the blob over (*buf malloc'd) or report the allocation failure. */
lb_err lb_pack_end(lb_packer *p, void **buf, size_t *len);

/** Start reading: LB_ERR_FILE unless the blob has the tag and version. */
lb_err lb_unpack_begin(lb_unpacker *u, const void *buf, size_t len, const char *tag, const char *what);
int64_t lb_unpack_i64(lb_unpacker *u);
double lb_unpack_f64(lb_unpacker *u);
/** LB_ERR_FILE if a read went past the end or bytes are left over. */
lb_err lb_unpack_end(lb_unpacker *u, const char *what);

#endif
