/* Little-endian blobs of the balancer's state (pack.h). */
#include "balance/impl/pack.h"

#include <stdlib.h>
#include <string.h>

#include "balance/lbstate.h"

static void put(lb_packer *p, uint64_t v, int nbytes)
{
  if (p->failed) return;
  if (p->len + (size_t)nbytes > p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 256;
    unsigned char *nb = realloc(p->buf, cap);
    if (!nb) {
      p->failed = 1;
      return;
    }
    p->buf = nb;
    p->cap = cap;
  }
  for (int i = 0; i < nbytes; i++) p->buf[p->len++] = (unsigned char)(v >> (8 * i));
}

static uint64_t get(lb_unpacker *u, int nbytes)
{
  uint64_t v = 0;
  if (u->failed || u->len - u->pos < (size_t)nbytes) {
    u->failed = 1;
    return 0;
  }
  for (int i = 0; i < nbytes; i++) v |= (uint64_t)u->buf[u->pos++] << (8 * i);
  return v;
}

void lb_pack_begin(lb_packer *p, const char *tag)
{
  memset(p, 0, sizeof *p);
  for (int i = 0; i < 4; i++) put(p, (unsigned char)tag[i], 1);
  put(p, LB_STATE_VERSION, 4);
}

void lb_pack_i64(lb_packer *p, int64_t v) { put(p, (uint64_t)v, 8); }

void lb_pack_f64(lb_packer *p, double v)
{
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  put(p, bits, 8);
}

lb_err lb_pack_end(lb_packer *p, void **buf, size_t *len)
{
  if (p->failed) {
    free(p->buf);
    return lb_error(LB_ERR_MEM, "state: out of memory packing %zu bytes", p->len);
  }
  *buf = p->buf;
  *len = p->len;
  return LB_OK;
}

lb_err lb_unpack_begin(lb_unpacker *u, const void *buf, size_t len, const char *tag, const char *what)
{
  uint64_t version;
  u->buf = buf;
  u->len = buf ? len : 0;
  u->pos = 0;
  u->failed = 0;
  if (u->len < 8 || memcmp(u->buf, tag, 4)) return lb_error(LB_ERR_FILE, "state: not a packed %s", what);
  u->pos = 4;
  version = get(u, 4);
  if (version != LB_STATE_VERSION)
    return lb_error(LB_ERR_FILE, "state: packed %s of version %llu, this library reads version %d", what, (unsigned long long)version, LB_STATE_VERSION);
  return LB_OK;
}

int64_t lb_unpack_i64(lb_unpacker *u) { return (int64_t)get(u, 8); }

double lb_unpack_f64(lb_unpacker *u)
{
  uint64_t bits = get(u, 8);
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

lb_err lb_unpack_end(lb_unpacker *u, const char *what)
{
  if (u->failed || u->pos != u->len) return lb_error(LB_ERR_FILE, "state: packed %s is truncated or has %zu extra bytes", what, u->failed ? 0 : u->len - u->pos);
  return LB_OK;
}
